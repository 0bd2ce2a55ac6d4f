"""Service level objectives (v1): the ``ServiceLevelObjective`` wire shape and the SLI
computed from the trial's own data.

- A **metric** SLO's SLI is good events over total events: its ``query`` numerator and
  denominator, each a sum of the points (seeded or submitted) that match the query's scope
  in the window; ``+ - * /`` between queries and numbers, and parentheses, are evaluated.
  One written with ``sli_specification.count`` gets the ``query`` Datadog derives from it.
- A **monitor** SLO's SLI is the share of the window its monitors spent out of Alert, from
  their recorded transitions.
- A **time-slice** SLO's SLI is the share of ``query_interval_seconds`` slices whose formula
  value meets its comparator and threshold (a slice without data counts as good).
"""

from __future__ import annotations

import ast
import bisect
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.tools.datadog.metrics import MetricStore
    from ancha.world.tools.datadog.monitors import Monitor

TYPE_IDS = {"monitor": 0, "metric": 1, "time_slice": 2}
TIMEFRAMES = ("7d", "30d", "90d", "custom")
SLO_CREATOR = {"name": "Acme Ops", "handle": "ops@acme.test", "email": "ops@acme.test"}
COMPARATORS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}

# A metric query inside an SLO formula: ``sum:http.hits{code:2xx,!env:dev}.as_count()``.
_TERM = re.compile(r"(?:(?:avg|sum|min|max):)?[A-Za-z][A-Za-z0-9_.]*\{[^}]*\}(?:\.as_(?:count|rate)\(\))?")
_TERM_PARTS = re.compile(r"^(?:(avg|sum|min|max):)?([A-Za-z][A-Za-z0-9_.]*)\{([^}]*)\}")
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def display(value: float) -> str:
    """``97.`` for 97, ``99.5`` for 99.5: how Datadog writes a threshold's ``*_display``."""
    text = f"{value:.6f}".rstrip("0")
    return text


def number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else value


CORRECTION_CATEGORIES = ("Scheduled Maintenance", "Outside Business Hours", "Deployment", "Other")


@dataclass(slots=True)
class Correction:
    """A window an SLO's history leaves out (``start``-``end``, or ``duration`` repeated by ``rrule``)."""

    id: str
    slo_id: str
    start: int
    category: str
    created: float
    end: int | None = None
    description: str | None = None
    timezone: str = "UTC"
    rrule: str | None = None
    duration: int | None = None
    modified: float | None = None
    deleted: float | None = None

    def to_dict(self, user: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "correction",
            "id": self.id,
            "attributes": {
                "slo_id": self.slo_id,
                "start": self.start,
                "end": self.end,
                "description": self.description,
                "category": self.category,
                "timezone": self.timezone,
                "created_at": int(self.created),
                "modified_at": int(self.modified or self.created),
                "rrule": self.rrule,
                "duration": self.duration,
                "creator": {"data": user},
                "modifier": {"data": user} if self.modified is not None else None,
            },
        }


@dataclass(slots=True)
class Slo:
    id: str
    name: str
    type: str
    thresholds: list[dict[str, Any]]
    created: float
    modified: float
    description: str = ""
    tags: list[str] = field(default_factory=list)
    query: dict[str, str] | None = None
    monitor_ids: list[int] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    sli_specification: dict[str, Any] | None = None
    timeframe: str | None = None
    target_threshold: float | None = None
    warning_threshold: float | None = None
    deleted: float | None = None
    corrections: list[Correction] = field(default_factory=list)

    @property
    def type_id(self) -> int:
        return TYPE_IDS[self.type]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "tags": sorted(self.tags),
            "monitor_tags": [],
            "thresholds": [dict(t) for t in self.thresholds],
            "type": self.type,
            "type_id": self.type_id,
            "description": self.description,
            "timeframe": self.timeframe,
        }
        if self.warning_threshold is not None:
            out["warning_threshold"] = number(self.warning_threshold)
        if self.target_threshold is not None:
            out["target_threshold"] = number(self.target_threshold)
        if self.query is not None:
            out["query"] = dict(self.query)
        if self.type == "monitor":
            out["monitor_ids"] = list(self.monitor_ids)
        out["creator"] = dict(SLO_CREATOR)
        out["created_at"], out["modified_at"] = int(self.created), int(self.modified)
        if self.groups:
            out["groups"] = list(self.groups)
        if self.sli_specification is not None:
            out["sli_specification"] = self.sli_specification
        return out


def derived_query(count: dict[str, Any]) -> dict[str, str]:
    """The ``query`` Datadog derives from ``sli_specification.count``."""
    queries = {q["name"]: q["query"] for q in count.get("queries") or [] if isinstance(q, dict)}

    def expand(formula: str) -> str:
        return _NAME.sub(lambda m: queries.get(m.group(0), m.group(0)), formula)

    good = expand(count["good_events_formula"]["formula"])
    if isinstance(count.get("total_events_formula"), dict):
        total = expand(count["total_events_formula"]["formula"])
    else:
        total = f"({good}) + ({expand(count['bad_events_formula']['formula'])})"
    return {"numerator": good, "denominator": total}


# --- evaluation ------------------------------------------------------------------------------


def _matches(scope: list[str], tags: tuple[str, ...]) -> bool:
    for want in scope:
        if want.startswith("!"):
            if want[1:] in tags:
                return False
        elif want not in tags:
            return False
    return True


def term_sum(store: MetricStore, term: str, t0: float, t1: float) -> float:
    """The sum of the points of ``term`` (``sum:name{scope}``) in [t0, t1)."""
    found = _TERM_PARTS.match(term)
    if found is None:
        return 0.0
    metric = store.get(found.group(2))
    if metric is None:
        return 0.0
    scope = [s.strip() for s in found.group(3).split(",") if s.strip() and s.strip() != "*"]
    lo, hi = bisect.bisect_left(metric.times, t0), bisect.bisect_left(metric.times, t1)
    return sum(value for _, value, tags in metric.points[lo:hi] if _matches(scope, tags))


def term_average(store: MetricStore, term: str, t0: float, t1: float) -> float | None:
    found = _TERM_PARTS.match(term)
    metric = store.get(found.group(2)) if found else None
    if found is None or metric is None:
        return None
    scope = [s.strip() for s in found.group(3).split(",") if s.strip() and s.strip() != "*"]
    lo, hi = bisect.bisect_left(metric.times, t0), bisect.bisect_left(metric.times, t1)
    values = [value for _, value, tags in metric.points[lo:hi] if _matches(scope, tags)]
    return sum(values) / len(values) if values else None


def arithmetic(text: str) -> float | None:
    """``(3 + 4) * 2`` evaluated (numbers, + - * / and parentheses only); None otherwise."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](value(node.left), value(node.right))
        raise ValueError("unsupported")

    try:
        return value(tree)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None


def formula_value(text: str, term: Callable[[str], float | None]) -> float | None:
    """``text`` with each metric query replaced by ``term(query)``, evaluated."""
    missing = False

    def replace(found: re.Match[str]) -> str:
        nonlocal missing
        got = term(found.group(0))
        if got is None:
            missing = True
            return "0"
        return repr(float(got))

    expanded = _TERM.sub(replace, text)
    return None if missing else arithmetic(expanded)


def interval_for(span: float) -> int:
    """About a dozen buckets over the span, in whole minutes (a day: 2 h)."""
    return max(60, int(-(-span // 12) // 60 * 60) or 60)


def monitor_state_at(monitor: Monitor, at: float) -> str:
    state = monitor.transitions[0].from_ if monitor.transitions else monitor.state
    for transition in monitor.transitions:
        if transition.at > at:
            break
        state = transition.to
    return state


def monitor_history(monitor: Monitor, t0: float, t1: float) -> tuple[list[list[int]], float]:
    """``[[ts, 0|1|2], ...]`` (up, down, no data) over [t0, t1), and the uptime share in percent."""
    code = {"Alert": 1, "No Data": 2}
    state = monitor_state_at(monitor, t0)
    history = [[int(t0), code.get(state, 0)]]
    down, last = 0.0, t0
    for transition in monitor.transitions:
        if t0 < transition.at < t1:
            if state == "Alert":
                down += transition.at - last
            state, last = transition.to, transition.at
            history.append([int(transition.at), code.get(state, 0)])
    if state == "Alert":
        down += t1 - last
    span = max(t1 - t0, 1e-9)
    return history, 100.0 * (1 - down / span)
