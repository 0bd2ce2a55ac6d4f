"""Monitors: the v1 ``Monitor`` wire shape, and each monitor's state history.

A monitor's ``overall_state`` is decided, in order, by: a forced state (a fault's
``datadog.monitor`` effect, or the world-rule action; the latest one set wins), then its
metric query evaluated on the trial's metrics (``avg(last_5m):avg:orders.latency.p99{*} >
2000``, with ``options.thresholds.warning`` for Warn) when that metric has any data, then
the state the seed gave it (OK by default). Every change is kept as a ``Transition``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import re2

from ancha.world.kernel.query_limits import too_long
from ancha.world.tools.datadog.metrics import RE2_OPTIONS, MonitorQuery, parse_monitor_query, re2_text
from ancha.world.tools.datadog.wire import iso_micro, iso_seconds

ORG_ID = 321813
STATES = ("OK", "Warn", "Alert", "No Data")
MONITOR_TYPES = ("composite", "event alert", "log alert", "metric alert", "process alert", "query alert",
                 "rum alert", "service check", "synthetics alert", "trace-analytics alert", "slo alert",
                 "event-v2 alert", "audit alert", "ci-pipelines alert", "ci-tests alert", "error-tracking alert",
                 "database-monitoring alert", "network-performance alert", "cost alert", "data-quality alert",
                 "network-path alert", "data-jobs alert")
_THRESHOLD_QUERY = re2.compile(r"(?s)^.+\(last_\d+[smhdw]\)\s*:.+(?:>=|<=|>|<|==)\s*-?\d+(?:\.\d+)?\s*$", RE2_OPTIONS)
CREATOR = {"email": "ops@acme.test", "handle": "ops@acme.test", "name": "Acme Ops"}


@dataclass(slots=True)
class Transition:
    at: float
    from_: str
    to: str
    cause: str
    """``fault:<ref>``, ``action``, ``metric``, ``released``."""
    notified: bool


@dataclass(slots=True)
class Monitor:
    id: int
    name: str
    type: str
    query: str
    message: str = ""
    tags: list[str] = field(default_factory=list)
    priority: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    ref: str | None = None
    created: float = 0.0
    modified: float = 0.0
    base_state: str = "OK"
    state: str = "OK"
    state_modified: float = 0.0
    forced: dict[str, str] = field(default_factory=dict)
    """Forced states by who forced them (``fault:<ref>``, ``action``); the last set wins."""
    transitions: list[Transition] = field(default_factory=list)
    last_triggered: float | None = None
    deleted: float | None = None
    creator: dict[str, Any] = field(default_factory=lambda: dict(CREATOR))
    seeded: bool = False
    actor: str = "seed"
    _parsed: tuple[str, MonitorQuery | None] | None = None

    @property
    def parsed(self) -> MonitorQuery | None:
        if self._parsed is None or self._parsed[0] != self.query:
            self._parsed = (self.query, parse_monitor_query(self.query))
        return self._parsed[1]

    def thresholds(self) -> dict[str, Any]:
        return dict(self.options.get("thresholds") or {})

    def to_dict(self, matching_downtimes: list[dict[str, Any]] | None = None,
                group_states: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "org_id": ORG_ID, "type": self.type, "name": self.name, "message": self.message,
            "tags": list(self.tags), "query": self.query, "options": self.options, "multi": False,
            "created": iso_micro(self.created), "modified": iso_micro(self.modified), "deleted": None,
            "restricted_roles": None, "priority": self.priority, "draft_status": "published",
            "creator": self.creator, "overall_state_modified": iso_seconds(self.state_modified),
            "overall_state": self.state,
        }
        if matching_downtimes is not None:
            out["matching_downtimes"] = matching_downtimes
        if group_states:
            out["state"] = {"groups": {}}
        return out

    def search_result(self) -> dict[str, Any]:
        parsed = self.parsed
        return {
            "id": self.id, "name": self.name, "org_id": ORG_ID, "type": self.type, "query": self.query,
            "status": self.state, "tags": list(self.tags), "creator": self.creator, "notifications": [],
            "classification": _classification(self.type),
            "last_triggered_ts": int(self.last_triggered) if self.last_triggered is not None else None,
            "metrics": [parsed.metric.name] if parsed else [],
            "scopes": list(parsed.metric.scope) or ["*"] if parsed else ["*"],
            "overall_state_modified": iso_seconds(self.state_modified),
        }


def _classification(kind: str) -> str:
    return {"metric alert": "metric", "query alert": "metric", "log alert": "log", "service check": "custom",
            "event alert": "event", "event-v2 alert": "event", "composite": "composite"}.get(kind, kind.split()[0])


def default_options(query: str, given: dict[str, Any] | None) -> dict[str, Any]:
    """The options Datadog fills in, with the critical threshold taken from the query."""
    options: dict[str, Any] = {"notify_audit": False, "notify_no_data": False, "include_tags": True,
                               "new_host_delay": 300, "require_full_window": False, "silenced": {},
                               "renotify_interval": None, "timeout_h": None}
    options.update(given or {})
    parsed = parse_monitor_query(query)
    thresholds = dict(options.get("thresholds") or {})
    if parsed is not None and "critical" not in thresholds:
        thresholds["critical"] = _number(parsed.threshold)
    if thresholds:
        options["thresholds"] = thresholds
    return options


def _number(value: float) -> float | int:
    return int(value) if value.is_integer() else value


def validate_monitor(data: dict[str, Any], partial: bool = False) -> str | None:
    """Datadog's 400 message for a create (or update) body, or None when it is acceptable."""
    if not partial or "type" in data:
        kind = data.get("type")
        if not isinstance(kind, str) or kind not in MONITOR_TYPES:
            return "Invalid monitor type" if kind is not None else "The value provided for parameter 'type' is invalid"
    if not partial or "query" in data:
        query = data.get("query")
        if not isinstance(query, str) or not query.strip() or too_long(query):
            return "The value provided for parameter 'query' is invalid"
    kind = data.get("type")
    query = data.get("query")
    if isinstance(query, str) and kind in ("metric alert", "query alert") \
            and not _THRESHOLD_QUERY.match(re2_text(query)):
        return "The value provided for parameter 'query' is invalid"
    for key in ("name", "message"):
        if key in data and not isinstance(data[key], str):
            return f"The value provided for parameter '{key}' is invalid"
    if "tags" in data and (not isinstance(data["tags"], list) or not all(isinstance(t, str) for t in data["tags"])):
        return "The value provided for parameter 'tags' is invalid"
    priority = data.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 5):
        return "Priority must be an integer between 1 and 5"
    options = data.get("options")
    if options is not None and not isinstance(options, dict):
        return "The value provided for parameter 'options' is invalid"
    thresholds = (options or {}).get("thresholds")
    if thresholds is not None and not isinstance(thresholds, dict):
        return "The value provided for parameter 'thresholds' is invalid"
    if isinstance(query, str) and isinstance(thresholds, dict):
        parsed = parse_monitor_query(query)
        critical = thresholds.get("critical")
        if critical is not None and (isinstance(critical, bool) or not isinstance(critical, (int, float))):
            return "The value provided for parameter 'critical' is invalid"
        if parsed is not None and critical is not None and float(critical) != parsed.threshold:
            return (f"Alert threshold ({_number(float(critical))}) does not match that used in the query "
                    f"({_number(parsed.threshold)}).")
    return None
