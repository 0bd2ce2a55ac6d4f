"""Grading a live world: every check of a scene, or ones given with ``POST /envs/{id}/checks``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ancha.checks.kinds import check_kind
from ancha.checks.results import CheckResult
from ancha.config.validation import INVALID
from ancha.errors import Problem
from ancha.scene.checks import build_checks
from ancha.scene.file_model import scene_file_model
from ancha.scene.model import CheckSpec
from ancha.scene.people import People
from ancha.scene.predicates import Resolver
from ancha.scene.refs import Declared, RefTable
from ancha.scene.sources import Source
from ancha.scene.walker import SceneWalker
from ancha.world.registry import catalog

if TYPE_CHECKING:
    from ancha.world.environment import Environment


def evaluate_checks(env: Environment, specs: list[CheckSpec],
                    required_ids: set[str] | None = None) -> list[CheckResult]:
    """Grade ``specs`` on ``env`` as it is now, in order, each by its kind.

    A check is required when its id is in ``required_ids``, by default the scene's ``pass``
    (every check when ``pass`` is empty): a task's checks are all required, whatever the
    scene's ``pass`` says. A kind graded after the trial comes back skipped (judge checks:
    the runner grades them with the user's own key).
    """
    if required_ids is None:
        required_ids = set(env.scene.pass_)
    return [check_kind(spec.kind).result(spec, env, not required_ids or spec.id in required_ids)
            for spec in specs]


def parse_check_specs(raw: Any, env: Environment) -> list[CheckSpec]:
    """Validate checks written as in a scene file or a task's JSON list (refs as ``$name``
    or ``$kind.name``) against the refs and people of ``env``'s world, exactly as the scene
    loader validates a scene's checks; raise ``ValueError`` naming every problem."""
    if not isinstance(raw, list):
        raise ValueError("checks must be a list of check objects, e.g. "
                         '[{"id": "posted", "trace": {"called": "POST /api/chat.postMessage"}}]')
    specs, problems = check_specs(raw, env)
    if problems:
        raise ValueError(describe_problems(problems))
    return specs


def check_specs(raw: list[Any], env: Environment, file: str = "",
                line_of: Callable[[str], int | None] | None = None) -> tuple[list[CheckSpec], list[Problem]]:
    """The valid checks of ``raw`` (a list of check objects) and every problem found, as
    ``parse_check_specs`` finds them; ``file`` and ``line_of`` locate the problems."""
    model = scene_file_model(catalog())
    walker = SceneWalker(model, file or None)
    clean = walker.section({"checks": raw}, model, "", None)
    source = Source(file, line_of or walker.line_of, walker.problems)
    for problem in source.problems:  # the walker's own problems, located as the caller says
        problem.line = problem.line or source.line_of(problem.path)
    specs: list[CheckSpec] = []
    if clean is not INVALID:
        resolver = Resolver(source, set(walker.lines), world_refs(env), People(env.scene.people), catalog())
        specs, _ids = build_checks(clean.get("checks", []), resolver)
    return specs, source.problems


def describe_problems(problems: list[Problem]) -> str:
    """Problems on one line, each as ``path: message (hint)``."""
    return "; ".join(f"{p.path}: {p.message}" + (f" ({p.hint})" if p.hint else "") for p in problems)


def world_refs(env: Environment) -> RefTable:
    """The refs of ``env``'s world, with their kinds and tools."""
    table = RefTable()

    def ignore(message: str, hint: str | None) -> None:
        pass  # the scene was validated when it was loaded

    channels = {r.id: n for n, r in env.refs.items() if r.kind == "channel"}
    for name, record in env.refs.items():
        extra = {}
        if record.kind == "message" and record.id.partition("/")[0] in channels:
            extra["channel"] = channels[record.id.partition("/")[0]]
        table.declare(name, Declared(record.kind, None, 0, extra, tool=record.tool), ignore)
    for person in env.scene.people:
        table.declare(person, Declared("person", None), ignore)
    return table
