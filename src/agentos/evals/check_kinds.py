"""The seven check types, compiled once and evaluated against a run's context.

A :class:`CompiledCheck` holds everything that is costly to prepare (the folded needle,
the RE2 program, the compiled expression) so that scoring a run is a few dictionary
reads and one comparison per check.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import re2

from agentos.evals.budget import ScoringBudget
from agentos.evals.errors import ExpressionError
from agentos.evals.expression import Expression, compile_expression

TEXT_TYPES = ("contains", "not_contains", "equals", "regex")
METRIC_TYPES = ("max_cost_usd", "max_duration_ms")
_METRICS = {"max_cost_usd": "cost_usd", "max_duration_ms": "duration_ms"}
MAX_PATTERN = 2_000
_MISSING = object()
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.log_errors = False  # RE2 would otherwise print every rejected pattern to stderr
_RE2_OPTIONS.never_capture = True  # checks only ask whether there is a match


class CheckProblem(Exception):
    """One reason a check cannot be compiled; ``str(e)`` is the reason."""


class CompiledCheck:
    """A check ready to evaluate; ``evaluate`` returns its result object and never raises."""

    __slots__ = ("id", "name", "type")

    def __init__(self, check: Mapping[str, Any]) -> None:
        self.id: str = check.get("id") or ""
        self.name: str = check.get("name") or ""
        self.type: str = check.get("type") or ""

    def evaluate(self, context: Mapping[str, Any], scoring: ScoringBudget | None = None) -> dict[str, Any]:
        """The result; with `scoring`, the run's shared budget, a check past it fails unevaluated."""
        scoring = scoring or ScoringBudget()
        if scoring.spent:
            passed, detail = False, scoring.refusal()
        else:
            try:
                passed, detail = self.judge(context, scoring)
            except Exception as error:  # a broken check fails; it never breaks scoring
                passed, detail = False, f"check error: {error}"
        return {"id": self.id, "name": self.name, "type": self.type, "passed": passed, "detail": detail}

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        raise NotImplementedError


def as_text(value: Any) -> str:
    """How a state variable reads to a text check: JSON for objects and lists, '' for null."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def format_number(value: float) -> str:
    """A metric as people wrote it: 0.0035, 0.05, 8000 (float noise from summing costs removed)."""
    if isinstance(value, float) and math.isfinite(value):
        return repr(float(f"{value:.12g}"))
    return repr(value)


class _TargetCheck(CompiledCheck):
    __slots__ = ("target", "value")

    def __init__(self, check: Mapping[str, Any]) -> None:
        super().__init__(check)
        self.target: str = check["target"]
        self.value: str = check["value"]

    def read(self, context: Mapping[str, Any]) -> tuple[str, str]:
        """The target's text, and the detail suffix when the target is absent."""
        raw = context.get(self.target, _MISSING)
        if raw is _MISSING:
            return "", f" (no '{self.target}' in output)"
        return as_text(raw), ""


class TextCheck(_TargetCheck):
    """contains, not_contains and equals; all fold case unless case_sensitive."""

    __slots__ = ("folded", "needle")

    def __init__(self, check: Mapping[str, Any]) -> None:
        super().__init__(check)
        self.folded = not check.get("case_sensitive", False)
        self.needle = self.value.casefold() if self.folded else self.value

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        text, suffix = self.read(context)
        scoring.spend(len(text))
        if self.folded:
            text = text.casefold()
        quoted = f"'{self.target}'"
        if self.type == "equals":
            passed = text == self.needle
            verb = "equals" if passed else "does not equal"
        else:
            found = self.needle in text
            passed = found if self.type == "contains" else not found
            verb = "contains" if found else "does not contain"
        return passed, f"{quoted} {verb} '{self.value}'{suffix}"


class RegexCheck(_TargetCheck):
    """The value is searched for in the target as written (use ``(?i)`` to ignore case).

    Matching runs on RE2, in time linear in the text, so no pattern can hang a run.
    """

    __slots__ = ("search",)

    def __init__(self, check: Mapping[str, Any]) -> None:
        super().__init__(check)
        self.search = _searcher(compile_regex(self.value))

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        text, suffix = self.read(context)
        scoring.spend(len(text))
        passed = self.search(text)
        verb = "matches" if passed else "does not match"
        return passed, f"'{self.target}' {verb} /{self.value}/{suffix}"


class MetricCheck(CompiledCheck):
    """max_cost_usd and max_duration_ms: the run metric must not exceed the value."""

    __slots__ = ("metric", "limit", "shown")

    def __init__(self, check: Mapping[str, Any]) -> None:
        super().__init__(check)
        self.metric = _METRICS[self.type]
        self.limit = check["value"]
        self.shown = format_number(self.limit)

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        actual = context.get(self.metric)
        if not isinstance(actual, int | float) or isinstance(actual, bool):
            return False, f"{self.metric} is not available"
        passed = actual <= self.limit
        return passed, f"{self.metric} {format_number(actual)} {'<=' if passed else '>'} {self.shown}"


class ExpressionCheck(CompiledCheck):
    """A boolean over the whole context, in the safe expression language."""

    __slots__ = ("expression",)

    def __init__(self, check: Mapping[str, Any]) -> None:
        super().__init__(check)
        self.expression: Expression = compile_expression(check["value"])

    def judge(self, context: Mapping[str, Any], scoring: ScoringBudget) -> tuple[bool, str]:
        budget = scoring.for_expression()
        try:
            held = bool(self.expression.evaluate(context, budget))
        except ExpressionError as error:
            return False, f"expression error: {error}"
        finally:
            scoring.spend(max(budget.used, 1))
        return held, "expression held" if held else "expression did not hold"


def _searcher(program: Any) -> Callable[[str], bool]:
    """Whether ``program`` matches somewhere in a text.

    The ``re2`` module's ``search`` builds match objects and maps byte offsets back to
    characters in Python, several times the cost of the match itself; a yes/no answer
    needs only RE2's own ``Match`` on the UTF-8 bytes.
    """
    raw = getattr(program, "_regexp", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if raw is None or anchor is None or not hasattr(raw, "Match"):
        return lambda text: program.search(text) is not None

    def search(text: str) -> bool:
        data = text.encode("utf-8", "replace")
        return bool(raw.Match(anchor, data, 0, len(data))[0][0] != -1)

    return search


def compile_regex(pattern: str) -> Any:
    """An RE2 program for ``pattern``; CheckProblem("invalid regex (...)") if it has none.

    Python's ``re`` words the common mistakes best, so it is asked first; RE2 then
    refuses what it cannot run in linear time (backreferences, lookaround).
    """
    if len(pattern) > MAX_PATTERN:
        raise CheckProblem(f"invalid regex (longer than {MAX_PATTERN:,} characters)")
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        raise CheckProblem(f"invalid regex ({error})") from None
    try:
        return re2.compile(pattern, _RE2_OPTIONS)
    except re2.error as error:
        reason = error.args[0] if error.args else "unsupported pattern"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise CheckProblem(f"invalid regex ({reason})") from None


_KINDS: dict[str, type[CompiledCheck]] = {
    "contains": TextCheck,
    "not_contains": TextCheck,
    "equals": TextCheck,
    "regex": RegexCheck,
    "max_cost_usd": MetricCheck,
    "max_duration_ms": MetricCheck,
    "expression": ExpressionCheck,
}


def compile_check(check: Mapping[str, Any]) -> CompiledCheck:
    """Compile one *normalized* check (see ``validate_checks``)."""
    try:
        return _KINDS[check["type"]](check)
    except ExpressionError as error:
        raise CheckProblem(f"invalid expression ({error})") from None
