"""Monitors (v1): create, get, list, update, delete, search, validate; v2 downtime matches."""

from __future__ import annotations

import math
import re
from typing import Any

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.kernel.query_limits import TOO_LONG, too_long
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import ApiError, bad_request, not_found
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.monitor_queries import METRIC_TYPES, stored_type
from ancha.world.tools.datadog.monitors import (
    AGENT_CREATOR,
    GroupState,
    Monitor,
    default_options,
    validate_monitor,
)
from ancha.world.tools.datadog.router import route

_GROUP_STATES = {"all", "alert", "warn", "no data", "ok"}
_SEARCH_STATUSES = {"alert", "warn", "no data", "ok", "ignored", "skipped", "unknown", "triggered"}
_FIELDS = {
    "name",
    "type",
    "query",
    "message",
    "tags",
    "priority",
    "options",
    "restricted_roles",
    "draft_status",
    "assets",
    "restriction_policy",
    "id",
    "org_id",
    "created",
    "created_at",
    "modified",
    "deleted",
    "creator",
    "multi",
    "overall_state",
    "overall_state_modified",
    "state",
    "matching_downtimes",
}
"""The ``Monitor`` / ``MonitorUpdateRequest`` fields; any other key in a body is refused."""


def _monitor(call: Call) -> Monitor:
    text = call.params["monitor_id"]
    if not is_plain_int(text):
        raise bad_request(f"Invalid value for parameter 'monitor_id': {text!r} is not an integer")
    monitor = call.state.monitor(int(text))
    if monitor is None:
        raise not_found("Monitor not found")
    call.state.evaluate(monitor)
    return monitor


def _wire(
    call: Call, monitor: Monitor, with_downtimes: bool = False, group_states: set[str] | None = None
) -> dict[str, Any]:
    downtimes: list[dict[str, Any]] | None = [] if with_downtimes else None
    silenced: dict[str, int | None] = {}
    now = call.state.now()
    for d in call.state.downtimes_for(monitor, now):
        current = d.current(now) if d.recurrences else None
        start, end = current if current is not None else (d.start, d.end)
        if d.active(now):
            silenced[d.scope] = int(end) if end else None
        if downtimes is not None:
            downtimes.append(
                {
                    "id": d.v1_id,
                    "active": d.active(now),
                    "monitor_id": monitor.id,
                    "start": int(start),
                    "end": int(end) if end else None,
                    "scope": [d.scope],
                    "groups": sorted(monitor.groups) if monitor.groups and d.active(now) else [],
                }
            )
    out = monitor.to_dict(downtimes, group_states)
    if silenced:  # Datadog shows an active downtime in options.silenced: scope -> its end (None: never)
        out["options"] = {**out["options"], "silenced": {**out["options"].get("silenced", {}), **silenced}}
    return out


def _assets(monitor_id: int, given: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A monitor's ``assets`` as Datadog keeps them: with its id, and empty ``options`` and
    ``template_variables`` unless given."""
    return [
        {"monitor_id": monitor_id, "template_variables": {}, "options": {}, **asset} for asset in given or []
    ]


def _group_states(call: Call) -> set[str] | None:
    """``group_states`` (``all`` or ``alert,warn,no data,ok``) as a set; 400 for any other word."""
    text = call.q("group_states")
    if text is None:
        return None
    wanted = {g.lower() for g in _tags(text)}
    if any(g not in _GROUP_STATES for g in wanted):
        raise bad_request("Invalid group_state filters.")
    return wanted


def _unknown_fields(data: dict[str, Any]) -> None:
    unknown = sorted(k for k in data if k not in _FIELDS)
    if unknown:
        raise bad_request(f"Invalid parameter(s): {', '.join(unknown)}")


@route("POST", "/api/v1/monitor")
def create_monitor(call: Call) -> Reply:
    data = call.object()
    _unknown_fields(data)
    problem = validate_monitor(data)
    if problem:
        raise bad_request(problem)
    state = call.state
    at = state.stamp()
    monitor = Monitor(
        id=state.new_monitor_id(),
        name=data.get("name") or "",
        type=stored_type(data["type"], data["query"]),
        query=data["query"],
        message=data.get("message") or "",
        tags=list(data.get("tags") or []),
        priority=data.get("priority"),
        options=default_options(data["query"], data.get("options"), data["type"]),
        created=at,
        modified=at,
        base_state="OK",
        state="OK",
        state_modified=at,
        actor=call.actor,
        draft_status=data.get("draft_status") or "published",
        restriction_policy=data.get("restriction_policy"),
    )
    monitor.creator = dict(AGENT_CREATOR)
    monitor.assets = _assets(monitor.id, data.get("assets"))
    state.monitors[monitor.id] = monitor
    state.world.bus.publish(domain_event("monitor_created", at, call.actor, monitor=monitor.id, ref=None))
    state.evaluate(monitor, "metric", call.actor)
    return Reply(200, _wire(call, monitor))


@route(
    "GET", "/api/v1/monitor/{monitor_id}", partial="group states: metric monitors grouped with by {tags} only"
)
def get_monitor(call: Call) -> Reply:
    group_states = _group_states(call)
    monitor = _monitor(call)
    return Reply(200, _wire(call, monitor, call.q_bool("with_downtimes"), group_states))


def _tags(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


@route(
    "GET",
    "/api/v1/monitor",
    partial="tags filters on the query's scope tags only; group states: metric "
    "monitors grouped with by {tags} only",
)
def list_monitors(call: Call) -> Reply:
    state = call.state
    group_states = _group_states(call)
    state.evaluate_all()
    name = (call.q("name") or "").lower()
    scope_tags = _tags(call.q("tags"))
    monitor_tags = _tags(call.q("monitor_tags"))
    id_offset = call.q_int("id_offset", 0)
    page = call.q_int("page", None, low=0)
    page_size = call.q_int("page_size", 100, low=1, high=1000) or 100
    found = []
    for monitor in sorted(state.live_monitors(), key=lambda m: m.id):
        if id_offset and monitor.id <= id_offset:
            continue
        if name and name not in monitor.name.lower():
            continue
        if monitor_tags and not all(t in monitor.tags for t in monitor_tags):
            continue
        if scope_tags:
            parsed = monitor.parsed
            scope = set(parsed.metric.scope) if parsed else set()
            if not all(t in scope for t in scope_tags):
                continue
        found.append(monitor)
    if page is not None:
        found = found[page * page_size : (page + 1) * page_size]
    with_downtimes = call.q_bool("with_downtimes")
    return Reply(200, [_wire(call, m, with_downtimes, group_states) for m in found])


@route("PUT", "/api/v1/monitor/{monitor_id}")
def update_monitor(call: Call) -> Reply:
    monitor = _monitor(call)
    data = call.object()
    _unknown_fields(data)
    merged = {"type": monitor.type, "query": monitor.query, **data}
    problem = validate_monitor(merged, partial=True)
    if problem:
        raise bad_request(problem)
    if (
        "type" in data
        and data["type"] != monitor.type
        and not {data["type"], monitor.type} <= set(METRIC_TYPES)
    ):
        raise bad_request("The monitor type cannot be changed")
    state = call.state
    if "query" in data:
        monitor.query = data["query"]
    for key in ("name", "message"):
        if key in data:
            setattr(monitor, key, data[key] or "")
    if "tags" in data:
        monitor.tags = list(data["tags"] or [])
    if "priority" in data:
        monitor.priority = data["priority"]
    if "assets" in data:
        monitor.assets = _assets(monitor.id, data["assets"])
    if "draft_status" in data:
        monitor.draft_status = data["draft_status"] or "published"
    if "restriction_policy" in data:
        monitor.restriction_policy = data["restriction_policy"]
    if "options" in data or "query" in data:
        options = {**monitor.options, **(data.get("options") or {})}
        if "query" in data and "thresholds" not in (data.get("options") or {}):
            options.pop("thresholds", None)
        monitor.options = default_options(monitor.query, options, monitor.type)
    if "query" in data:
        monitor.groups.clear()
    monitor.modified = state.stamp()
    state.world.bus.publish(
        domain_event("monitor_updated", monitor.modified, call.actor, monitor=monitor.id, ref=monitor.ref)
    )
    state.evaluate(monitor, "metric", call.actor)
    return Reply(200, _wire(call, monitor))


@route(
    "DELETE",
    "/api/v1/monitor/{monitor_id}",
    partial="force is accepted and ignored (nothing references monitors)",
)
def delete_monitor(call: Call) -> Reply:
    monitor = _monitor(call)
    state = call.state
    monitor.deleted = state.stamp()
    state.world.bus.publish(
        domain_event("monitor_deleted", monitor.deleted, call.actor, monitor=monitor.id, ref=monitor.ref)
    )
    return Reply(200, {"deleted_monitor_id": monitor.id})


@route("GET", "/api/v1/monitor/can_delete")
def check_can_delete_monitor(call: Call) -> Reply:
    ids = _tags(call.q("monitor_ids"))
    if not ids or not all(is_plain_int(i) for i in ids):
        raise bad_request("Invalid value for parameter 'monitor_ids'")
    missing = [i for i in ids if call.state.monitor(int(i)) is None]
    if missing:
        raise ApiError(400, f"Monitors not found: {', '.join(missing)}")
    return Reply(200, {"data": {"ok": [int(i) for i in ids]}, "errors": None})


@route("POST", "/api/v1/monitor/validate")
def validate_monitor_route(call: Call) -> Reply:
    data = call.object()
    _unknown_fields(data)
    problem = validate_monitor(data)
    if problem:
        raise bad_request(problem)
    return Reply(200, {})


@route("POST", "/api/v1/monitor/{monitor_id}/validate")
def validate_existing_monitor(call: Call) -> Reply:
    _monitor(call)
    data = call.object()
    _unknown_fields(data)
    problem = validate_monitor(data)
    if problem:
        raise bad_request(problem)
    return Reply(200, {})


# --- search --------------------------------------------------------------------------------

_SEARCH_TERM = re.compile(r'(\w+):("[^"]*"|\S+)|"([^"]*)"|(\S+)')


def _search_match(monitor: Monitor, muted: bool, text: str) -> bool:
    for key, value, phrase, word in _SEARCH_TERM.findall(text):
        if key:
            value = value.strip('"').lower()
            values = [v.strip() for v in value.strip("()").split(",")] if value.startswith("(") else [value]
            if (
                key == "status"
                and monitor.state.lower() not in values
                and not ("triggered" in values and monitor.state in ("Alert", "Warn", "No Data"))
            ):
                return False
            if key == "type" and not any(
                v in monitor.type or v == monitor.search_result()["classification"] for v in values
            ):
                return False
            if key == "tag" and not any(v in [t.lower() for t in monitor.tags] for v in values):
                return False
            if key == "id" and str(monitor.id) not in values:
                return False
            if key == "muted" and (value == "true") != muted:
                return False
            if (
                key == "priority"
                and f"p{monitor.priority}" not in values
                and str(monitor.priority) not in values
            ):
                return False
            if key in ("metric", "scope"):
                parsed = monitor.parsed
                haystack = (
                    (parsed.metric.name if key == "metric" else parsed.metric.scope_text) if parsed else ""
                )
                if not any(v in haystack.lower() for v in values):
                    return False
        else:
            needle = (phrase or word).lower()
            if needle not in monitor.name.lower() and needle not in monitor.query.lower():
                return False
    return True


def _search_query(call: Call) -> tuple[int, int, str]:
    """``(page, per_page, query)`` of a monitor or monitor group search, the query's length
    and statuses checked as Datadog checks them."""
    page = call.q_int("page", 0, low=0) or 0
    per_page = call.q_int("per_page", 30, low=1, high=1000) or 30
    text = call.q("query") or ""
    if too_long(text):
        raise bad_request(f"Invalid query: {TOO_LONG}")
    _check_statuses(text)
    return page, per_page, text


def _facet(counts: dict[Any, int]) -> list[dict[str, Any]]:
    return [{"count": n, "name": k} for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))]


@route(
    "GET",
    "/api/v1/monitor/search",
    partial="query terms: free text, status, type, tag, id, muted, priority, "
    "metric, scope; sort by name, status, id",
)
def search_monitors(call: Call) -> Reply:
    state = call.state
    state.evaluate_all()
    now = state.now()
    page, per_page, text = _search_query(call)
    found = []
    for monitor in state.live_monitors():
        muted = state.silenced(monitor, now)
        if _search_match(monitor, muted, text):
            found.append((monitor, muted))
    sort = call.q("sort") or "status,asc"
    field, _, direction = sort.partition(",")
    keys = {
        "name": lambda m: m[0].name.lower(),
        "status": lambda m: (
            ("Alert", "Warn", "No Data", "OK").index(m[0].state)
            if m[0].state in ("Alert", "Warn", "No Data", "OK")
            else 9
        ),
        "id": lambda m: m[0].id,
    }
    key = keys.get(field.strip())
    if key is None:
        raise bad_request(f"Invalid sort field: {field}")
    found.sort(key=key, reverse=direction.strip() == "desc")
    counts: dict[str, dict[Any, int]] = {"muted": {}, "status": {}, "tag": {}, "type": {}}
    for monitor, muted in found:
        counts["muted"][muted] = counts["muted"].get(muted, 0) + 1
        status = monitor.state.lower()
        counts["status"][status] = counts["status"].get(status, 0) + 1
        kind = monitor.search_result()["classification"]
        counts["type"][kind] = counts["type"].get(kind, 0) + 1
        for tag in monitor.tags:
            counts["tag"][tag] = counts["tag"].get(tag, 0) + 1
    total = len(found)
    shown = found[page * per_page : (page + 1) * per_page]
    return Reply(
        200,
        {
            "counts": {k: _facet(v) for k, v in counts.items()},
            "metadata": {
                "page": page,
                "page_count": max(1, math.ceil(total / per_page)),
                "per_page": per_page,
                "total_count": total,
            },
            "monitors": [m.search_result(_muted_until(call, m), muted) for m, muted in shown],
        },
    )


def _check_statuses(text: str) -> None:
    """400 for a ``status:`` term naming no monitor status, as Datadog's query parser answers."""
    for key, value, _, _ in _SEARCH_TERM.findall(text):
        if key != "status":
            continue
        value = value.strip('"').lower()
        for status in [v.strip() for v in value.strip("()").split(",")] if value.startswith("(") else [value]:
            if status not in _SEARCH_STATUSES:
                raise bad_request(f"Query parsing error: '{status}' is not a valid monitor status")


def _muted_until(call: Call, monitor: Monitor) -> float | None:
    """When the active downtimes silencing ``monitor`` end (None: one never ends, or none)."""
    now = call.state.now()
    ends: list[float] = []
    for downtime in call.state.downtimes_for(monitor, now):
        if not downtime.active(now):
            continue
        current = downtime.current(now) if downtime.recurrences else None
        end = current[1] if current is not None else downtime.end
        if end is None:
            return None
        ends.append(end)
    return max(ends) if ends else None


@route(
    "GET",
    "/api/v1/monitor/groups/search",
    partial="groups of metric monitors grouped with by {tags}; query "
    "terms: free text, status, type, tag, id, muted, priority, metric, scope; sort by status, group, name",
)
def search_monitor_groups(call: Call) -> Reply:
    state = call.state
    state.evaluate_all()
    now = state.now()
    page, per_page, text = _search_query(call)
    rows: list[tuple[Monitor, str, str]] = []
    for monitor in state.live_monitors():
        muted = state.silenced(monitor, now)
        term_free = _SEARCH_TERM.sub(
            lambda m: m.group(0) if m.group(1) and m.group(1) != "status" else "", text
        )
        if not _search_match(monitor, muted, term_free):
            continue
        groups: list[tuple[str, GroupState | None]] = [*sorted(monitor.groups.items())] or [("*", None)]
        for name, group in groups:
            status = group.status if group is not None else monitor.state
            if _status_excluded(text, status):
                continue
            rows.append((monitor, name, status))
    sort = call.q("sort") or "status,asc"
    field, _, direction = sort.partition(",")
    order = ("Alert", "Warn", "No Data", "OK")
    keys = {
        "status": lambda r: order.index(r[2]) if r[2] in order else 9,
        "group": lambda r: r[1],
        "name": lambda r: r[0].name.lower(),
    }
    key = keys.get(field.strip())
    if key is None:
        raise bad_request(f"Invalid sort field: {field}")
    rows.sort(key=key, reverse=direction.strip() == "desc")
    counts: dict[str, dict[Any, int]] = {"status": {}, "type": {}}
    for monitor, _, status in rows:
        counts["status"][status] = counts["status"].get(status, 0) + 1
        kind = monitor.search_result()["classification"]
        counts["type"][kind] = counts["type"].get(kind, 0) + 1
    shown = rows[page * per_page : (page + 1) * per_page]
    groups_out = []
    for monitor, name, status in shown:
        kept = monitor.groups.get(name)
        triggered = kept.last_triggered if kept is not None else monitor.last_triggered
        nodata = kept.last_nodata if kept is not None else None
        groups_out.append(
            {
                "group": name,
                "group_tags": name.split(",") if name != "*" else ["*"],
                "last_nodata_ts": int(nodata) if nodata is not None else 0,
                "last_triggered_ts": int(triggered) if triggered is not None else None,
                "monitor_id": monitor.id,
                "monitor_name": monitor.name,
                "status": status,
            }
        )
    return Reply(
        200,
        {
            "counts": {k: _facet(v) for k, v in counts.items()},
            "groups": groups_out,
            "metadata": {
                "page": page,
                "page_count": max(1, math.ceil(len(rows) / per_page)),
                "per_page": per_page,
                "total_count": len(rows),
            },
        },
    )


def _status_excluded(text: str, status: str) -> bool:
    for key, value, _, _ in _SEARCH_TERM.findall(text):
        if key == "status":
            value = value.strip('"').lower()
            values = [v.strip() for v in value.strip("()").split(",")] if value.startswith("(") else [value]
            if status.lower() not in values and not ("triggered" in values and status != "OK"):
                return True
    return False


@route("GET", "/api/v2/monitor/{monitor_id}/downtime_matches")
def get_monitor_downtime_matches(call: Call) -> Reply:
    text = call.params["monitor_id"]
    if is_plain_int(text) and call.state.monitor(int(text)) is None:
        raise not_found(f"Monitor with id {int(text)} not found")
    monitor = _monitor(call)
    now = call.state.now()
    offset = call.q_int("page[offset]", 0, low=0) or 0
    limit = call.q_int("page[limit]", 30, low=1, high=100) or 30
    matches = call.state.downtimes_for(monitor, now)
    return Reply(
        200,
        {
            "data": [d.match(now) for d in matches[offset : offset + limit]],
            "meta": {"page": {"total_filtered_count": len(matches)}},
        },
    )
