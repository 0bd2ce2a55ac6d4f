"""Coverage gaps of a trial: calls the agent made to operations the vendor has and the
replica does not implement (answered 501, traced with ``coverage_gap: true``).

Such a call never counts as one that worked, so a trial that hit one may have failed
because of the replica, not the agent. The world counts them per operation
(``Environment.coverage_gaps``: ``{"tool", "method", "path", "calls"}``); the runner keeps
them in ``checks.json`` as ``coverage_gaps: {"calls": N, "operations": [...]}`` and in
``summary.json``, and every report says so in the words of ``describe``.
"""

from __future__ import annotations

from typing import Any

SHOWN = 3
"""Operations named in one sentence; the rest are counted."""


def operations(raw: Any) -> list[dict[str, Any]]:
    """The well-formed operations of a world's (or a file's) list, most called first."""
    found: list[dict[str, Any]] = []
    for gap in raw if isinstance(raw, list) else []:
        calls = gap.get("calls") if isinstance(gap, dict) else None
        if isinstance(calls, int) and not isinstance(calls, bool) and calls > 0:
            found.append({"tool": str(gap.get("tool", "")), "method": str(gap.get("method", "")),
                          "path": str(gap.get("path", "")), "calls": calls})
    return sorted(found, key=lambda g: -g["calls"])


def checks_field(gaps: list[dict[str, Any]]) -> dict[str, Any]:
    """``coverage_gaps`` of ``checks.json`` and of a trial in ``summary.json``."""
    return {"calls": sum(g["calls"] for g in gaps), "operations": gaps}


def of_checks(checks: dict[str, Any]) -> list[dict[str, Any]]:
    """The operations of a ``checks.json`` (or a summary's trial); [] when it has no gaps."""
    field = checks.get("coverage_gaps")
    return operations(field.get("operations")) if isinstance(field, dict) else []


def merged(lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Several trials' operations as one list, calls added up."""
    calls: dict[tuple[str, str, str], int] = {}
    for gaps in lists:
        for g in gaps:
            key = (g["tool"], g["method"], g["path"])
            calls[key] = calls.get(key, 0) + g["calls"]
    return operations([{"tool": t, "method": m, "path": p, "calls": n} for (t, m, p), n in calls.items()])


def operation(gap: dict[str, Any]) -> str:
    """``GET /repos/acme/orders/events (github)``, with its count when called more than once."""
    calls = f", {gap['calls']} calls" if gap["calls"] > 1 else ""
    return f"{gap['method']} {gap['path']} ({gap['tool']}{calls})"


def describe(gaps: list[dict[str, Any]]) -> str:
    """``3 calls hit unimplemented operations: GET /x (github, 2 calls), POST /y (slack)``;
    '' when there are none."""
    if not gaps:
        return ""
    total = sum(g["calls"] for g in gaps)
    named = ", ".join(operation(g) for g in gaps[:SHOWN])
    more = f" and {len(gaps) - SHOWN} more" if len(gaps) > SHOWN else ""
    calls = "call" if total == 1 else "calls"
    what = "an unimplemented operation" if len(gaps) == 1 else "unimplemented operations"
    return f"{total} {calls} hit {what}: {named}{more}"


def strict_reason(gaps: list[dict[str, Any]]) -> str:
    """Why ``ancha run --strict-coverage`` made the trial invalid."""
    return (f"--strict-coverage: {describe(gaps)}; the replica does not implement them, so the trial cannot "
            "tell the agent's faults from the replica's")
