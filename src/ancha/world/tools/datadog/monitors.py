"""Monitors: the v1 ``Monitor`` wire shape, and each monitor's state history.

A monitor's ``overall_state`` is decided, in order, by: a forced state (an active fault's
``datadog.monitor`` effect, which holds until the fault is resolved; else the latest
world-rule action), then its
metric query evaluated on the trial's metrics (``avg(last_5m):avg:orders.latency.p99{*} >
2000``, with ``options.thresholds.warning`` for Warn) when that metric has any data, then
the state the seed gave it (OK by default). Every change is kept as a ``Transition``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ancha.world.tools.datadog.metric_expressions import MonitorQuery, parse_monitor_query
from ancha.world.tools.datadog.monitor_queries import (
    GROUPBY_SIMPLE_TYPES,
    group_tags,
    query_problem,
    threshold_of,
)
from ancha.world.tools.datadog.wire import iso_micro, iso_seconds

ORG_ID = 321813
STATES = ("OK", "Warn", "Alert", "No Data")
MONITOR_TYPES = (
    "composite",
    "event alert",
    "log alert",
    "metric alert",
    "process alert",
    "query alert",
    "rum alert",
    "service check",
    "synthetics alert",
    "trace-analytics alert",
    "slo alert",
    "event-v2 alert",
    "audit alert",
    "ci-pipelines alert",
    "ci-tests alert",
    "error-tracking alert",
    "database-monitoring alert",
    "network-performance alert",
    "cost alert",
    "data-quality alert",
    "network-path alert",
    "data-jobs alert",
    "llm-observability alert",
)
CREATOR = {"email": "ops@acme.test", "handle": "ops@acme.test", "name": "Acme Ops", "id": 1445416}
AGENT_CREATOR = {
    "email": "agent@acme.test",
    "handle": "agent@acme.test",
    "name": "Ancha Agent",
    "id": 1445417,
}
DRAFT_STATUSES = ("draft", "published")
SEVERITY = {"Alert": 0, "Warn": 1, "No Data": 2, "OK": 3}
"""The worst group decides a multi alert's overall state."""


@dataclass(slots=True)
class GroupState:
    """One group of a multi alert (``host:web-1``), as ``state.groups`` and group search show it."""

    status: str = "OK"
    last_triggered: float | None = None
    last_nodata: float | None = None
    last_resolved: float | None = None
    last_notified: float | None = None

    def to_dict(self, name: str) -> dict[str, Any]:
        return {
            "name": name,
            "status": self.status,
            "last_triggered_ts": _ts(self.last_triggered),
            "last_nodata_ts": _ts(self.last_nodata),
            "last_notified_ts": _ts(self.last_notified),
            "last_resolved_ts": _ts(self.last_resolved),
        }


def _ts(t: float | None) -> int:
    """Epoch seconds; 0 for never (the vendor's ``MonitorStateGroup`` has no nulls)."""
    return 0 if t is None else int(t)


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
    """Forced states by who forced them (``fault:<ref>``, ``action``): the last fault set wins,
    else the last set."""
    transitions: list[Transition] = field(default_factory=list)
    last_triggered: float | None = None
    deleted: float | None = None
    creator: dict[str, Any] = field(default_factory=lambda: dict(CREATOR))
    seeded: bool = False
    actor: str = "seed"
    assets: list[Any] = field(default_factory=list)
    draft_status: str = "published"
    restriction_policy: Any = None
    groups: dict[str, GroupState] = field(default_factory=dict)
    """A multi alert's groups by name (``host:web-1``), each with its own state."""
    _parsed: tuple[str, MonitorQuery | None] | None = None

    @property
    def parsed(self) -> MonitorQuery | None:
        if self._parsed is None or self._parsed[0] != self.query:
            self._parsed = (self.query, parse_monitor_query(self.query))
        return self._parsed[1]

    def thresholds(self) -> dict[str, Any]:
        return dict(self.options.get("thresholds") or {})

    def state_for(self, parsed: MonitorQuery, value: float) -> str:
        """Alert past the critical threshold, Warn past the warning one, else OK."""
        thresholds = self.thresholds()
        critical = thresholds.get("critical")
        if parsed.crosses(value, float(critical) if critical is not None else None):
            return "Alert"
        warning = thresholds.get("warning")
        if warning is not None and parsed.crosses(value, float(warning)):
            return "Warn"
        return "OK"

    def decide(self, parsed: MonitorQuery, values: dict[tuple[str, ...], float], now: float) -> str | None:
        """The state the window's values decide (None: no data). A multi alert keeps each
        group's state in ``groups`` (a group that stops reporting goes No Data when
        ``notify_no_data`` is set) and is as bad as its worst group."""
        if not parsed.expression.by:
            value = values.get(())
            return None if value is None else self.state_for(parsed, value)
        seen: set[str] = set()
        for key, value in values.items():
            name = ",".join(key)
            seen.add(name)
            self._set_group(name, self.state_for(parsed, value), now)
        if self.options.get("notify_no_data"):
            for name in self.groups:
                if name not in seen:
                    self._set_group(name, "No Data", now)
        if not self.groups:
            return None
        return min((g.status for g in self.groups.values()), key=lambda s: SEVERITY.get(s, 9))

    def _set_group(self, name: str, status: str, now: float) -> None:
        group = self.groups.get(name)
        if group is None:
            group = self.groups[name] = GroupState(status="OK")
        if group.status == status:
            return
        if status == "Alert":
            group.last_triggered = now
        elif status == "No Data":
            group.last_nodata = now
        elif status == "OK":
            group.last_resolved = now
        group.last_notified = now
        group.status = status

    @property
    def multi(self) -> bool:
        return bool(group_tags(self.query))

    def to_dict(
        self, matching_downtimes: list[dict[str, Any]] | None = None, group_states: set[str] | None = None
    ) -> dict[str, Any]:
        """The v1 ``Monitor``; ``group_states``: the group statuses (lower case, or ``all``) whose
        groups ``state.groups`` lists."""
        out: dict[str, Any] = {
            "id": self.id,
            "org_id": ORG_ID,
            "type": self.type,
            "name": self.name,
            "message": self.message,
            "tags": list(self.tags),
            "query": self.query,
            "options": self.options,
            "multi": self.multi,
            "created_at": int(self.created * 1000),
            "created": iso_micro(self.created),
            "modified": iso_micro(self.modified),
            "deleted": None,
            "priority": self.priority,
            "restricted_roles": None,
            "restriction_policy": self.restriction_policy,
            "draft_status": self.draft_status,
            "assets": list(self.assets),
            "creator": self.creator,
            "overall_state_modified": iso_seconds(self.state_modified),
            "overall_state": self.state,
        }
        if matching_downtimes is not None:
            out["matching_downtimes"] = matching_downtimes
        if group_states is not None:
            out["state"] = {
                "groups": {
                    name: group.to_dict(name)
                    for name, group in sorted(self.groups.items())
                    if "all" in group_states or group.status.lower() in group_states
                }
            }
        return out

    def search_result(self, muted_until: float | None = None, muted: bool = False) -> dict[str, Any]:
        """One ``monitors`` item of ``/api/v1/monitor/search``; ``muted_until`` ends the downtime
        silencing it (None with ``muted``: until cancelled)."""
        parsed = self.parsed
        return {
            "id": self.id,
            "name": self.name,
            "org_id": ORG_ID,
            "type": self.type,
            "query": self.query,
            "status": self.state,
            "tags": list(self.tags),
            "creator": self.creator,
            "notifications": [],
            "classification": _classification(self.type),
            "priority": self.priority,
            "last_triggered_ts": int(self.last_triggered) if self.last_triggered is not None else None,
            "muted_until_ts": int(muted_until) if muted and muted_until is not None else None,
            "metrics": sorted({m.name for m in parsed.expression.metrics}) if parsed else [],
            "scopes": list(parsed.metric.scope) or ["*"] if parsed else ["*"],
            "overall_state_modified": iso_seconds(self.state_modified),
            "restricted_roles": None,
        }


def _classification(kind: str) -> str:
    return {
        "metric alert": "metric",
        "query alert": "metric",
        "log alert": "log",
        "service check": "custom",
        "event alert": "event",
        "event-v2 alert": "event",
        "composite": "composite",
    }.get(kind, kind.split()[0])


def default_options(query: str, given: dict[str, Any] | None, kind: str = "") -> dict[str, Any]:
    """The options Datadog fills in, with the critical threshold taken from the query."""
    options: dict[str, Any] = {
        "notify_audit": False,
        "notify_no_data": False,
        "include_tags": True,
        "new_host_delay": 300,
        "require_full_window": False,
        "silenced": {},
        "renotify_interval": None,
        "timeout_h": None,
    }
    if kind in GROUPBY_SIMPLE_TYPES:
        options["groupby_simple_monitor"] = False
    options.update(given or {})
    threshold = threshold_of(query)
    thresholds = dict(options.get("thresholds") or {})
    if threshold is not None and "critical" not in thresholds:
        thresholds["critical"] = _number(threshold)
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
            return (
                "Invalid monitor type"
                if kind is not None
                else "The value provided for parameter 'type' is invalid"
            )
    kind = data.get("type")
    query = data.get("query")
    if not partial or "query" in data:
        if not isinstance(query, str):
            return "The value provided for parameter 'query' is invalid"
        problem = query_problem(kind, query)
        if problem:
            return problem
    draft = data.get("draft_status")
    if draft is not None and draft not in DRAFT_STATUSES:
        return "The value provided for parameter 'draft_status' is invalid"
    assets = data.get("assets")
    if assets is not None and (not isinstance(assets, list) or not all(isinstance(a, dict) for a in assets)):
        return "The value provided for parameter 'assets' is invalid"
    for key in ("name", "message"):
        if key in data and not isinstance(data[key], str):
            return f"The value provided for parameter '{key}' is invalid"
    if "tags" in data and (
        not isinstance(data["tags"], list) or not all(isinstance(t, str) for t in data["tags"])
    ):
        return "The value provided for parameter 'tags' is invalid"
    priority = data.get("priority")
    if priority is not None and (
        isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 5
    ):
        return "Priority must be an integer between 1 and 5"
    options = data.get("options")
    if options is not None and not isinstance(options, dict):
        return "The value provided for parameter 'options' is invalid"
    thresholds = (options or {}).get("thresholds")
    if thresholds is not None and not isinstance(thresholds, dict):
        return "The value provided for parameter 'thresholds' is invalid"
    if isinstance(query, str) and isinstance(thresholds, dict):
        threshold = threshold_of(query)
        critical = thresholds.get("critical")
        if critical is not None and (isinstance(critical, bool) or not isinstance(critical, (int, float))):
            return "The value provided for parameter 'critical' is invalid"
        if threshold is not None and critical is not None and float(critical) != threshold:
            return (
                f"Alert threshold ({_number(float(critical))}) does not match that used in the query "
                f"({_number(threshold)})."
            )
    return None
