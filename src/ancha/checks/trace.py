"""Trace checks: which calls the agent made (``called``) and which it must not (``not_called``)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ancha.checks.calls import entry_line, entry_outcome
from ancha.checks.kinds import CheckKind
from ancha.scene.check_kinds import form
from ancha.scene.model import CheckSpec, TraceCheck
from ancha.world.call_patterns import AGENT, TracePattern, compile_pattern
from ancha.world.kernel.predicate import CALL_TRACED
from ancha.world.kernel.trace import TraceEntry

if TYPE_CHECKING:
    from ancha.world.environment import Environment

MISSES_SHOWN = 5


@dataclass(slots=True)
class _Part:
    """One pattern's share of the check."""

    label: str
    passed: bool
    expected: str
    actual: str
    evidence: list[int] = field(default_factory=list)


@dataclass(slots=True)
class TraceOutcome:
    passed: bool
    expected: str
    actual: str
    explanation: str
    evidence: list[int]


def grade_trace(spec: CheckSpec, env: Environment) -> TraceOutcome:
    assert spec.trace is not None
    return evaluate_trace(spec.trace, env.trace)


TRACE = CheckKind(form("trace"), grade_trace, events=lambda spec: frozenset({CALL_TRACED}))
"""``trace``: which calls the agent made; every traced call may change it."""


def evaluate_trace(check: TraceCheck, entries: Iterable[TraceEntry]) -> TraceOutcome:
    """Grade ``check`` against the trace; only the agent's own calls count."""
    calls = [e for e in entries if e.actor == AGENT]
    count_every_attempt = check.status == "any"
    parts = [_called(compile_pattern(p), calls, count_every_attempt) for p in check.called]
    if check.not_called:
        parts.append(_not_called([compile_pattern(p) for p in check.not_called], calls))
    if not parts:
        raise ValueError("a trace check needs called or not_called")
    passed = all(p.passed for p in parts)
    expected = "; and ".join(p.expected for p in parts)
    # With several patterns, each one's finding is labelled with its pattern.
    actual = parts[0].actual if len(parts) == 1 else " | ".join(f"{p.label}: {p.actual}" for p in parts)
    shown = parts if passed else [p for p in parts if not p.passed]
    evidence = sorted({seq for p in shown for seq in p.evidence})
    if passed:
        explanation = f"Passed: expected {expected}, and found {actual}."
    else:
        wanted = "; and ".join(p.expected for p in shown)
        found = " | ".join(p.actual for p in shown)
        explanation = f"Failed: expected {wanted}, but found {found}."
    return TraceOutcome(passed, expected, actual, explanation, evidence)


def _called(pattern: TracePattern, calls: list[TraceEntry], every_attempt: bool) -> _Part:
    label = f"called {pattern}"
    matching = [e for e in calls if pattern.matches(e.method, e.path)]
    worked = [e for e in matching if e.worked]
    if every_attempt:
        expected = f"a call matching {pattern} (any outcome counts)"
        if matching:
            return _Part(label, True, expected, _count(matching, "matching call") + _seqs(matching),
                         [e.seq for e in matching])
        return _Part(label, False, expected, _no_match(pattern, calls))
    expected = f"a call matching {pattern} that worked"
    if worked:
        actual = f"{_count(matching, 'matching call')}, {len(worked)} worked" + _seqs(worked)
        return _Part(label, True, expected, actual, [e.seq for e in worked])
    if matching:
        last = matching[-1]
        actual = f"{_count(matching, 'matching call')}, none worked (last: {entry_outcome(last)})"
        return _Part(label, False, expected, actual, [e.seq for e in matching])
    return _Part(label, False, expected, _no_match(pattern, calls))


def _not_called(patterns: list[TracePattern], calls: list[TraceEntry]) -> _Part:
    label = "not_called " + ", ".join(str(p) for p in patterns)
    expected = "no call matching " + " or ".join(str(p) for p in patterns)
    offending = [e for e in calls if any(p.matches(e.method, e.path) for p in patterns)]
    if not offending:
        return _Part(label, True, expected, "no agent call matched")
    listed = ", ".join(entry_line(e) for e in offending[:MISSES_SHOWN])
    more = f" and {len(offending) - MISSES_SHOWN} more" if len(offending) > MISSES_SHOWN else ""
    return _Part(label, False, expected, f"{_count(offending, 'matching call')}: {listed}{more}",
                 [e.seq for e in offending])


def _no_match(pattern: TracePattern, calls: list[TraceEntry]) -> str:
    if not calls:
        return "no agent call matched; the agent made no calls"
    # Some vendors' APIs take GET or POST alike, so a method mismatch is the likeliest miss.
    other_methods = sorted({e.method.upper() for e in calls if pattern.path.fullmatch(e.path)})
    hint = ""
    if other_methods:
        hint = (f" (the path matched calls made with {'/'.join(other_methods)}; "
                "* as the method accepts any)")
    return "no agent call matched; the agent called: " + ", ".join(closest_misses(pattern, calls)) + hint


def closest_misses(pattern: TracePattern, calls: list[TraceEntry], limit: int = MISSES_SHOWN) -> list[str]:
    """The distinct ``METHOD PATH`` the agent called, most like ``pattern`` first."""
    distinct: dict[str, int] = {}
    for e in calls:
        key = f"{e.method} {e.path}"
        distinct[key] = distinct.get(key, 0) + 1
    target = pattern.text.replace("*", "")
    ranked = sorted(distinct, key=lambda k: -difflib.SequenceMatcher(None, target, k).ratio())
    shown = [k if distinct[k] == 1 else f"{k} (x{distinct[k]})" for k in ranked[:limit]]
    if len(ranked) > limit:
        shown.append(f"and {len(ranked) - limit} more")
    return shown


def _count(entries: list[TraceEntry], noun: str) -> str:
    return f"{len(entries)} {noun}{'' if len(entries) == 1 else 's'}"


def _seqs(entries: list[TraceEntry]) -> str:
    seqs = [f"#{e.seq}" for e in entries[:MISSES_SHOWN]]
    return f" ({', '.join(seqs)}{', ...' if len(entries) > MISSES_SHOWN else ''})"
