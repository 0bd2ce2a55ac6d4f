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
from ancha.world.tools.datadog.monitors import Monitor, default_options, validate_monitor
from ancha.world.tools.datadog.router import route

_GROUP_STATES = {"all", "alert", "warn", "no data", "ok"}


def _monitor(call: Call) -> Monitor:
    text = call.params["monitor_id"]
    if not is_plain_int(text):
        raise bad_request(f"Invalid value for parameter 'monitor_id': {text!r} is not an integer")
    monitor = call.state.monitor(int(text))
    if monitor is None:
        raise not_found("Monitor not found")
    call.state.evaluate(monitor)
    return monitor


def _wire(call: Call, monitor: Monitor, with_downtimes: bool = False, group_states: bool = False) -> dict[str, Any]:
    downtimes = None
    if with_downtimes:
        now = call.state.now()
        downtimes = [{"id": d.id, "start": int(d.start), "end": int(d.end) if d.end else None, "scope": [d.scope]}
                     for d in call.state.downtimes_for(monitor, now)]
    return monitor.to_dict(downtimes, group_states)


@route("POST", "/api/v1/monitor")
def create_monitor(call: Call) -> Reply:
    data = call.object()
    problem = validate_monitor(data)
    if problem:
        raise bad_request(problem)
    state = call.state
    at = state.stamp()
    monitor = Monitor(id=state.new_monitor_id(), name=data.get("name") or "", type=data["type"],
                      query=data["query"], message=data.get("message") or "", tags=list(data.get("tags") or []),
                      priority=data.get("priority"), options=default_options(data["query"], data.get("options")),
                      created=at, modified=at, base_state="OK", state="OK", state_modified=at, actor=call.actor)
    monitor.creator = {"email": "agent@acme.test", "handle": "agent@acme.test", "name": "Ancha Agent"}
    state.monitors[monitor.id] = monitor
    state.world.bus.publish(domain_event("monitor_created", at, call.actor, monitor=monitor.id, ref=None))
    state.evaluate(monitor, "metric", call.actor)
    return Reply(200, _wire(call, monitor))


@route("GET", "/api/v1/monitor/{monitor_id}", partial="group_states lists no groups (monitors are not multi-alert)")
def get_monitor(call: Call) -> Reply:
    monitor = _monitor(call)
    return Reply(200, _wire(call, monitor, call.q_bool("with_downtimes"), call.q("group_states") is not None))


def _tags(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


@route("GET", "/api/v1/monitor", partial="tags filters on the query's scope tags only; no multi-alert groups")
def list_monitors(call: Call) -> Reply:
    state = call.state
    state.evaluate_all()
    group_states = call.q("group_states")
    if group_states is not None:
        unknown = [g for g in _tags(group_states) if g.lower() not in _GROUP_STATES]
        if unknown:
            raise bad_request(f"Invalid group_states: {', '.join(unknown)}")
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
        found = found[page * page_size:(page + 1) * page_size]
    with_downtimes = call.q_bool("with_downtimes")
    return Reply(200, [_wire(call, m, with_downtimes, group_states is not None) for m in found])


@route("PUT", "/api/v1/monitor/{monitor_id}")
def update_monitor(call: Call) -> Reply:
    monitor = _monitor(call)
    data = call.object()
    merged = {"type": monitor.type, "query": monitor.query, **data}
    problem = validate_monitor(merged, partial=True)
    if problem:
        raise bad_request(problem)
    if "type" in data and data["type"] != monitor.type:
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
    if "options" in data or "query" in data:
        options = {**monitor.options, **(data.get("options") or {})}
        if "query" in data and "thresholds" not in (data.get("options") or {}):
            options.pop("thresholds", None)
        monitor.options = default_options(monitor.query, options)
    monitor.modified = state.stamp()
    state.world.bus.publish(domain_event("monitor_updated", monitor.modified, call.actor, monitor=monitor.id,
                                       ref=monitor.ref))
    state.evaluate(monitor, "metric", call.actor)
    return Reply(200, _wire(call, monitor))


@route("DELETE", "/api/v1/monitor/{monitor_id}", partial="force is accepted and ignored (nothing references monitors)")
def delete_monitor(call: Call) -> Reply:
    monitor = _monitor(call)
    state = call.state
    monitor.deleted = state.stamp()
    state.world.bus.publish(domain_event("monitor_deleted", monitor.deleted, call.actor, monitor=monitor.id,
                                       ref=monitor.ref))
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
    problem = validate_monitor(call.object())
    if problem:
        raise bad_request(problem)
    return Reply(200, {})


@route("POST", "/api/v1/monitor/{monitor_id}/validate")
def validate_existing_monitor(call: Call) -> Reply:
    _monitor(call)
    problem = validate_monitor(call.object())
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
            if key == "status" and monitor.state.lower() not in values:
                return False
            if key == "type" and not any(v in monitor.type or v == monitor.search_result()["classification"]
                                         for v in values):
                return False
            if key == "tag" and not any(v in [t.lower() for t in monitor.tags] for v in values):
                return False
            if key == "id" and str(monitor.id) not in values:
                return False
            if key == "muted" and (value == "true") != muted:
                return False
            if key == "priority" and f"p{monitor.priority}" not in values and str(monitor.priority) not in values:
                return False
            if key in ("metric", "scope"):
                parsed = monitor.parsed
                haystack = (parsed.metric.name if key == "metric" else parsed.metric.scope_text) if parsed else ""
                if not any(v in haystack.lower() for v in values):
                    return False
        else:
            needle = (phrase or word).lower()
            if needle not in monitor.name.lower() and needle not in monitor.query.lower():
                return False
    return True


def _facet(counts: dict[Any, int]) -> list[dict[str, Any]]:
    return [{"count": n, "name": k} for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))]


@route("GET", "/api/v1/monitor/search", partial="query terms: free text, status, type, tag, id, muted, priority, "
       "metric, scope; sort by name, status, id")
def search_monitors(call: Call) -> Reply:
    state = call.state
    state.evaluate_all()
    now = state.now()
    page = call.q_int("page", 0, low=0) or 0
    per_page = call.q_int("per_page", 30, low=1, high=1000) or 30
    text = call.q("query") or ""
    if too_long(text):
        raise bad_request(f"Invalid query: {TOO_LONG}")
    found = []
    for monitor in state.live_monitors():
        muted = state.silenced(monitor, now)
        if _search_match(monitor, muted, text):
            found.append((monitor, muted))
    sort = call.q("sort") or "status,asc"
    field, _, direction = sort.partition(",")
    keys = {"name": lambda m: m[0].name.lower(), "status": lambda m: ("Alert", "Warn", "No Data", "OK").index(
        m[0].state) if m[0].state in ("Alert", "Warn", "No Data", "OK") else 9, "id": lambda m: m[0].id}
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
    shown = found[page * per_page:(page + 1) * per_page]
    return Reply(200, {
        "counts": {k: _facet(v) for k, v in counts.items()},
        "metadata": {"page": page, "page_count": max(1, math.ceil(total / per_page)), "per_page": per_page,
                     "total_count": total},
        "monitors": [m.search_result() for m, _ in shown],
    })


@route("GET", "/api/v2/monitor/{monitor_id}/downtime_matches")
def get_monitor_downtime_matches(call: Call) -> Reply:
    monitor = _monitor(call)
    now = call.state.now()
    offset = call.q_int("page[offset]", 0, low=0) or 0
    limit = call.q_int("page[limit]", 30, low=1, high=100) or 30
    matches = call.state.downtimes_for(monitor, now)
    return Reply(200, {"data": [d.match(now) for d in matches[offset:offset + limit]],
                       "meta": {"page": {"total_filtered_count": len(matches)}}})
