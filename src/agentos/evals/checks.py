"""Workflow checks: validating a batch, building a run's context, and scoring it.

Scoring is detached from execution: it runs after a run has succeeded, and a check that
is broken or raises becomes a failed result, never a failed run.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from agentos.evals.budget import ScoringBudget
from agentos.evals.check_kinds import (
    METRIC_TYPES,
    TEXT_TYPES,
    CheckProblem,
    CompiledCheck,
    compile_check,
    compile_regex,
)
from agentos.evals.errors import ExpressionError
from agentos.evals.expression import compile_expression

__all__ = [
    "CHECK_TYPES",
    "MAX_CHECKS",
    "CheckValidationError",
    "CompiledCheck",
    "build_context",
    "compile_checks",
    "evaluate_check",
    "evaluate_checks",
    "validate_checks",
]

CHECK_TYPES = ("contains", "not_contains", "equals", "regex", "max_cost_usd", "max_duration_ms", "expression")
MAX_CHECKS = 50
_ID = re.compile(r"chk_[0-9a-f]{10}")
_FIELDS = ("id", "name", "type", "target", "value", "case_sensitive")


class CheckValidationError(Exception):
    """A batch of checks was refused; ``detail`` lists every problem, ``str(e) == detail``."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.detail = "Invalid checks: " + "; ".join(problems)
        super().__init__(self.detail)


CHECK_FIELDS = ("id", "name", "type", "target", "value", "case_sensitive")


def validate_checks(raw: Any) -> list[dict[str, Any]]:
    """Normalize a batch of checks, or raise CheckValidationError listing every problem.

    Each check comes back as ``{id, name, type, target, value, case_sensitive}``; an id
    that is already a valid, unused ``chk_`` id is kept, otherwise a new one is made.
    """
    if not isinstance(raw, list | tuple):
        raise CheckValidationError(["checks must be a list"])
    problems: list[str] = []
    if len(raw) > MAX_CHECKS:
        problems.append(f"at most {MAX_CHECKS} checks are allowed, got {len(raw)}")
    normalized: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, item in enumerate(raw, start=1):
        check, found = _normalize(item)
        problems.extend(f"check {number}: {problem}" for problem in found)
        if check is None:
            continue
        if not (isinstance(check["id"], str) and _ID.fullmatch(check["id"])) or check["id"] in seen:
            check["id"] = _new_id(seen)
        seen.add(check["id"])
        normalized.append(check)
    if problems:
        raise CheckValidationError(problems)
    return normalized


def _new_id(taken: set[str]) -> str:
    while True:
        candidate = "chk_" + secrets.token_hex(5)
        if candidate not in taken:
            return candidate


def _normalize(item: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """One check in its stored shape, and everything wrong with it."""
    if not isinstance(item, Mapping):
        return None, ["must be an object"]
    problems: list[str] = [f"unknown field {key!r} (a check's fields are {', '.join(CHECK_FIELDS)})"
                           for key in item if key not in CHECK_FIELDS]
    name, kind, target, value = item.get("name"), item.get("type"), item.get("target"), item.get("value")
    if name is None or (isinstance(name, str) and not name.strip()):
        problems.append("name is required")
    elif not isinstance(name, str):
        problems.append("name must be a string")
    if kind is None:
        problems.append("type is required")
    elif kind not in CHECK_TYPES:
        problems.append(f"unknown type {kind!r}")
    if target is not None and not isinstance(target, str):
        problems.append("target must be a string")
        target = None
    if kind in CHECK_TYPES:
        problems.extend(_value_problems(kind, target, value))
    case_sensitive = item.get("case_sensitive")
    if case_sensitive is not None and not isinstance(case_sensitive, bool):
        problems.append("case_sensitive must be true or false")
    check = {
        "id": item.get("id"),
        "name": name,
        "type": kind,
        "target": target or "",
        "value": value,
        "case_sensitive": bool(case_sensitive),
    }
    return check, problems


def _value_problems(kind: str, target: str | None, value: Any) -> list[str]:
    if kind in TEXT_TYPES:
        problems = [] if target else [f"'{kind}' needs a target state variable"]
        if not isinstance(value, str):
            problems.append(f"'{kind}' needs a string value")
        elif kind == "regex":
            try:
                compile_regex(value)
            except CheckProblem as problem:
                problems.append(str(problem))
        return problems
    if kind in METRIC_TYPES:
        if not isinstance(value, int | float) or isinstance(value, bool):
            return [f"'{kind}' needs a numeric value"]
        if not math.isfinite(value):
            return [f"'{kind}' needs a finite numeric value"]
        if value < 0:
            return [f"'{kind}' needs a non-negative value, got {value!r}"]
        return []
    if not isinstance(value, str):
        return [f"'{kind}' needs a string value"]
    try:
        compile_expression(value)
    except ExpressionError as error:
        return [f"invalid expression ({error})"]
    return []


def build_context(
    state: Mapping[str, Any], input: Mapping[str, Any], cost_usd: float, duration_ms: int
) -> dict[str, Any]:
    """The dictionary every check of a run is evaluated against.

    State variables sit at the top level; ``cost_usd``, ``duration_ms``, ``input`` and
    ``state`` (the state dictionary itself) are reserved and win over state variables of
    the same name, which stay reachable as ``state['name']``.
    """
    context = dict(state)
    context["cost_usd"] = cost_usd
    context["duration_ms"] = duration_ms
    context["input"] = input if input is not None else {}
    context["state"] = state
    return context


class _InvalidCheck(CompiledCheck):
    """A stored check that no longer validates: it fails, saying why."""

    __slots__ = ("reason",)

    def __init__(self, check: Mapping[str, Any], reason: str) -> None:
        super().__init__(check)
        self.reason = reason

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        return False, f"invalid check: {self.reason}"


def _compile_one(check: Mapping[str, Any]) -> CompiledCheck:
    normalized, problems = _normalize(check)
    if normalized is None:
        return _InvalidCheck({}, "; ".join(problems))
    normalized["id"] = normalized["id"] if isinstance(normalized["id"], str) else ""
    if problems:
        return _InvalidCheck(
            {k: v if isinstance(v, str) else "" for k, v in normalized.items()}, "; ".join(problems)
        )
    try:
        return compile_check(normalized)
    except CheckProblem as problem:
        return _InvalidCheck(normalized, str(problem))


@lru_cache(maxsize=2048)
def _compile_cached(key: tuple[Any, ...]) -> CompiledCheck:
    return _compile_one(
        {field: value for field, value in zip(_FIELDS, key, strict=False) if value is not None}
    )


def _key(check: Any) -> tuple[Any, ...] | None:
    if type(check) is not dict:
        return None
    get = check.get
    value = get("value")
    # type(value) keeps 1, 1.0 and True apart: they hash alike but do not validate alike.
    key = (get("id"), get("name"), get("type"), get("target"), value, get("case_sensitive"), type(value))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def compile_checks(checks: Sequence[Mapping[str, Any]]) -> list[CompiledCheck]:
    """Compiled checks, from a cache keyed by each check's fields."""
    compiled = []
    for check in checks:
        key = _key(check)
        compiled.append(_compile_one(check) if key is None else _compile_cached(key))
    return compiled


def evaluate_check(check: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """One result ``{id, name, type, passed, detail}``; never raises."""
    try:
        return compile_checks([check])[0].evaluate(context)
    except Exception as error:  # the last line of defence: scoring must not break a run
        return {
            "id": "", "name": "", "type": "", "passed": False, "detail": f"check error: {error}",
        }  # fmt: skip


def evaluate_checks(checks: Sequence[Mapping[str, Any]], context: Mapping[str, Any]) -> dict[str, Any]:
    """The run's ``evals`` summary: ``{passed, total, results}``, results in check order.

    The checks share one :class:`ScoringBudget`: once it is spent, the remaining checks
    fail with a detail saying so, so no run's scoring can take long.
    """
    scoring = ScoringBudget()
    results = [compiled.evaluate(context, scoring) for compiled in compile_checks(checks)]
    return {"passed": sum(1 for r in results if r["passed"]), "total": len(results), "results": results}
