"""Grading a live world: every check of a scene, or ones given with ``POST /envs/{id}/checks``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ancha.checks.judge import RUNNER_GRADES_JUDGE, judge_expected
from ancha.checks.patterns import compile_pattern
from ancha.checks.process import evaluate_process
from ancha.checks.results import CheckResult
from ancha.checks.state import evaluate_state
from ancha.checks.trace import evaluate_trace
from ancha.scene.model import PROCESS_KINDS, CheckSpec, Scene
from ancha.scene.refs import Declared, RefTable

if TYPE_CHECKING:
    from ancha.world.environment import Environment

KINDS = ("trace", "state", "judge")


def evaluate_checks(env: Environment, specs: list[CheckSpec]) -> list[CheckResult]:
    """Grade ``specs`` on ``env`` as it is now, in order.

    A check is required when its id is in the scene's ``pass`` (every check when
    ``pass`` is empty). Judge checks are skipped here: the runner grades them with the
    user's own key.
    """
    required_ids = set(env.scene.pass_)
    results: list[CheckResult] = []
    for spec in specs:
        required = not required_ids or spec.id in required_ids
        if spec.judge is not None:
            results.append(CheckResult.skipped(spec.id, required, judge_expected(spec.judge),
                                               RUNNER_GRADES_JUDGE))
            continue
        try:
            if spec.trace is not None:
                outcome: Any = evaluate_trace(spec.trace, env.trace)
            elif spec.state is not None:
                outcome = evaluate_state(spec.state, env)
            elif any(getattr(spec, kind) is not None for kind in PROCESS_KINDS):
                outcome = evaluate_process(spec, env)
            else:
                raise ValueError("it has no kind (trace, state, judge or a process check)")
        except ValueError as exc:  # a check the loader let through but cannot be graded: say so, never 500
            results.append(CheckResult.outcome(spec.id, required, False, f"check {spec.id} to be gradable",
                                               f"it could not be graded: {exc}",
                                               f"Failed: check {spec.id} could not be graded: {exc}."))
            continue
        results.append(CheckResult.outcome(spec.id, required, outcome.passed, outcome.expected,
                                           outcome.actual, outcome.explanation, outcome.evidence))
    return results


def parse_check_specs(raw: Any, scene: Scene) -> list[CheckSpec]:
    """Validate checks written as in a scene file or a task's JSON list (refs as ``$name``
    or ``$kind.name``) against ``scene``'s refs; raise ``ValueError`` naming every problem."""
    if not isinstance(raw, list):
        raise ValueError("checks must be a list of check objects, e.g. "
                         '[{"id": "posted", "trace": {"called": "POST /api/chat.postMessage"}}]')
    table = scene_refs(scene)
    problems: list[str] = []
    specs: list[CheckSpec] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        where = f"checks[{index}]"
        found: list[str] = []

        def report(message: str, hint: str | None, at: str = where, into: list[str] = found) -> None:
            into.append(f"{at}: {message}" + (f" ({hint})" if hint else ""))

        spec = _parse_one(item, table, report, where)
        if spec is not None and spec.id in seen:
            report(f"duplicate check id {spec.id}", "check ids are unique")
        if not found and spec is not None:
            seen.add(spec.id)
            specs.append(spec)
        problems.extend(found)
    if problems:
        raise ValueError("; ".join(problems))
    return specs


Report = Callable[..., None]


def _parse_one(item: Any, table: RefTable, report: Report, where: str) -> CheckSpec | None:
    if not isinstance(item, dict):
        report(f"expected a check object, got {type(item).__name__}", None)
        return None
    if not isinstance(item.get("id"), str) or not item["id"]:
        report("a check needs an id", "id: a unique name that results and pass refer to")
        return None
    kinds = [k for k in item if k not in ("id", "line")]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        report(f"unknown check kind {', '.join(unknown)}", f"this server grades {', '.join(KINDS)} checks")
        return None
    if len(kinds) != 1:
        report("a check has exactly one kind" if kinds else "a check needs a kind",
               f"one of {', '.join(KINDS)}")
        return None
    data = dict(item)
    at = f"{where}.{kinds[0]}"
    if "trace" in data:
        data["trace"] = _trace(data["trace"], lambda m, h: report(m, h, at))
    if "state" in data:
        def report_state(message: str, hint: str | None, suffix: str = "") -> None:
            report(message, hint, at + suffix)

        data["state"] = _state(data["state"], table, report_state)
    if "judge" in data and not (isinstance(data["judge"], str) and data["judge"].strip()):
        report("a judge check is a rubric string", None, at)
    try:
        return CheckSpec.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            path = ".".join(str(p) for p in error["loc"])
            report(error["msg"], None, f"{where}.{path}")
        return None


def _trace(value: Any, report: Callable[[str, str | None], None]) -> Any:
    if not isinstance(value, dict):
        return value
    value = dict(value)
    for key in ("called", "not_called"):
        patterns = value.get(key)
        if isinstance(patterns, str):
            patterns = value[key] = [patterns]
        if isinstance(patterns, list):
            for text in patterns:
                try:
                    compile_pattern(str(text))
                except ValueError as exc:
                    report(str(exc), None)
    if not value.get("called") and not value.get("not_called"):
        report("a trace check needs called or not_called", 'e.g. {"called": "POST /api/chat.postMessage"}')
    if value.get("status") is not None and not value.get("called"):
        report("status: any only applies to called", None)
    return value


_SLACK_MESSAGE_REFS = {"channel": "channel", "from": "user", "in_thread_of": "message"}


def _state(value: Any, table: RefTable, report: Callable[..., None]) -> Any:
    if not isinstance(value, dict):
        return value
    value = dict(value)
    body = value.get("slack.message")
    if isinstance(body, dict):
        body = value["slack.message"] = dict(body)
        for field, kind in _SLACK_MESSAGE_REFS.items():
            if field in body:
                name = table.resolve(body[field], kind, partial(report, suffix=f".slack.message.{field}"))
                if name is not None:
                    body[field] = name
        count = body.get("count_gte", 1)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            report(f"count_gte must be a whole number of at least 1, got {count!r}", None,
                   suffix=".slack.message.count_gte")
    return value


def scene_refs(scene: Scene) -> RefTable:
    """The refs ``scene`` declares, with their kinds."""
    table = RefTable()

    def ignore(message: str, hint: str | None) -> None:
        pass  # the scene was validated when it was loaded

    slack = scene.world.slack
    if slack is not None:
        table.declare(slack.bot.ref, Declared("user", None), ignore)
        for i, user in enumerate(slack.users):
            if user.ref:
                table.declare(user.ref, Declared("user", None, i), ignore)
        for i, channel in enumerate(slack.channels):
            if channel.ref:
                table.declare(channel.ref, Declared("channel", None, i), ignore)
        for i, message in enumerate(slack.messages):
            if message.ref:
                table.declare(message.ref, Declared("message", None, i), ignore)
    return table
