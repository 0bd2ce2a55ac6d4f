"""What Datadog accepts as a monitor's ``query``, by monitor type, and what the replica reads
from it: the threshold after the comparison, and whether it groups (a multi alert).

Datadog checks every query for a comparison at its end (``> 2``, ``>= 0.8``), except
composite monitors (``12345 && 67890``), service checks (``"ntp.in_sync".over("*")
.last(2).count_by_status()``) and synthetics alerts, which Datadog writes itself. Metric
and query alerts must also read ``<aggregation>(<window>):<metric expression>``, with a
window ``last_5m``/``last_1h``/... or a calendar window ``current_1d``/``current_1w``/
``current_1mo``/``current_1y``, or be a formula over ``options.variables``
(``formula("query1 / query2 * 100").last("15m") >= 0.8``).
"""

from __future__ import annotations

import re2

from ancha.world.kernel.query_limits import too_long
from ancha.world.tools.datadog.metrics import RE2_OPTIONS, re2_text

INVALID_QUERY = "The value provided for parameter 'query' is invalid"
NO_OPERATOR = f"{INVALID_QUERY}: invalid operator specified: "
NO_COMPARISON = ("composite", "service check", "synthetics alert")
METRIC_TYPES = ("metric alert", "query alert")
GROUPBY_SIMPLE_TYPES = (
    "log alert",
    "rum alert",
    "ci-pipelines alert",
    "ci-tests alert",
    "error-tracking alert",
    "llm-observability alert",
    "audit alert",
    "trace-analytics alert",
    "event-v2 alert",
    "database-monitoring alert",
    "data-jobs alert",
)
"""Event-platform types: Datadog answers ``options.groupby_simple_monitor`` (false unless set)."""

_COMPARISON = re2.compile(
    r"(?s)^(?P<left>.*?)\s*(?P<op>>=|<=|!=|==|>|<)\s*(?P<threshold>-?\d+(?:\.\d+)?)\s*$", RE2_OPTIONS
)
_METRIC_LEFT = re2.compile(
    r"(?s)^\s*[a-z_0-9]+\(\s*(?:last_\d+(?:mo|[smhdw])|current_1(?:mo|[hdwy]))\s*\)\s*:\s*\S.*$", RE2_OPTIONS
)
_FORMULA_LEFT = re2.compile(r"(?s)^\s*formula\(\s*\".+\"\s*\)(?:\.[a-z_]+\([^)]*\))+\s*$", RE2_OPTIONS)
_METRIC_GROUPS = re2.compile(r"\bby\s*\{\s*([^}]*?)\s*\}", RE2_OPTIONS)
_CALL_GROUPS = re2.compile(r"\.by\(\s*[\"']([^\"']*)[\"']\s*\)", RE2_OPTIONS)
_COMPOSITE = re2.compile(r"^[\s0-9()&|!]+$", RE2_OPTIONS)


def query_problem(kind: object, query: str) -> str | None:
    """Datadog's 400 text for ``query`` on a monitor of type ``kind``; None when it is accepted."""
    if not query.strip() or too_long(query):
        return INVALID_QUERY
    text = re2_text(query)
    if kind == "composite":
        return None if _COMPOSITE.match(text) and any(c.isdigit() for c in text) else INVALID_QUERY
    if kind in NO_COMPARISON:
        return None
    match = _COMPARISON.match(text)
    if match is None:
        return NO_OPERATOR
    if kind in METRIC_TYPES:
        left = match["left"]
        if not (_METRIC_LEFT.match(left) or _FORMULA_LEFT.match(left)):
            return INVALID_QUERY
    return None


def stored_type(kind: str, query: str) -> str:
    """The type Datadog keeps for a new monitor: ``metric alert`` and ``query alert`` are one
    kind, kept as ``metric alert`` for a formula query and ``query alert`` for any other."""
    if kind not in METRIC_TYPES:
        return kind
    return "metric alert" if query.lstrip().startswith("formula(") else "query alert"


def threshold_of(query: str) -> float | None:
    """The number a query compares with (``> 2000`` -> 2000.0); None when it has none."""
    if too_long(query):
        return None
    match = _COMPARISON.match(re2_text(query))
    return float(match["threshold"]) if match else None


def group_tags(query: str) -> list[str]:
    """The tag keys a query groups by (``by {host,env}``, ``.by("source")``); ``*`` is none."""
    if too_long(query):
        return []
    text = re2_text(query)
    found: list[str] = []
    for pattern in (_METRIC_GROUPS, _CALL_GROUPS):
        for match in pattern.finditer(text):
            for tag in match.group(1).split(","):
                tag = tag.strip()
                if tag and tag != "*" and tag not in found:
                    found.append(tag)
    return found


def is_multi(query: str) -> bool:
    """A multi alert: the query groups, so each group has a state of its own."""
    return bool(group_tags(query))
