"""Events: v1 post, list (start/end) and get; v2 list and search (the log query syntax)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import bad_request, not_found
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.log_query import QuerySyntaxError, compile_query
from ancha.world.tools.datadog.logs import decode_cursor, encode_cursor
from ancha.world.tools.datadog.records import Event
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.wire import parse_when

ALERT_TYPES = ("error", "warning", "info", "success", "user_update", "recommendation", "snapshot")
PAGE_V1 = 1000
BAD_CURSOR = "{'errors': [u\"input_validation_error(Field 'page' is invalid: invalid cursor)\"]}"
"""Datadog's answer to a cursor it did not hand out, word for word."""
MAX_AGE = 18 * 3600
"""Datadog takes events up to 18 hours in the past (``date_happened``)."""


@route("POST", "/api/v1/events", app_key=False)
def create_event(call: Call) -> Reply:
    data = call.object()
    title, text = data.get("title"), data.get("text")
    if not isinstance(title, str) or not title:
        raise bad_request("Event title is required")
    if not isinstance(text, str):
        raise bad_request("Event text is required")
    alert_type = data.get("alert_type") or "info"
    if alert_type not in ALERT_TYPES:
        raise bad_request(f"Invalid alert_type: {alert_type}")
    priority = data.get("priority")
    if priority is not None and priority not in ("normal", "low"):
        raise bad_request(f"Invalid priority: {priority}")
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise bad_request("tags must be a list of strings")
    related = data.get("related_event_id")
    if related is not None and (isinstance(related, bool) or not isinstance(related, int)):
        raise bad_request("related_event_id must be an integer event id")
    state = call.state
    at = state.stamp()
    happened = data.get("date_happened")
    if happened is not None and (isinstance(happened, bool) or not isinstance(happened, (int, float))):
        raise bad_request("date_happened must be a POSIX timestamp")
    if happened is not None and happened < state.now() - MAX_AGE:
        raise bad_request("Event too far in the past")
    event = Event(
        id=state.new_event_id(),
        title=title,
        text=text[:4000],
        at=float(happened) if happened is not None else at,
        tags=list(tags),
        alert_type=alert_type,
        priority=data.get("priority"),
        host=data.get("host"),
        source_type_name=data.get("source_type_name"),
        aggregation_key=data.get("aggregation_key"),
        device_name=data.get("device_name"),
        actor=call.actor,
        related_event_id=related,
    )
    state._insert_event(event)
    state.world.bus.publish(
        domain_event("event_posted", at, call.actor, event=event.id, title=event.title, tags=list(event.tags))
    )
    body = {
        k: v
        for k, v in event.v1(call.replica.base_url).items()
        if k
        in (
            "id",
            "id_str",
            "title",
            "text",
            "date_happened",
            "handle",
            "priority",
            "related_event_id",
            "tags",
            "url",
        )
    }
    return Reply(202, {"status": "ok", "event": body})


@route("GET", "/api/v1/events", partial="sources filters on source_type_name; aggregation is not modelled")
def list_events(call: Call) -> Reply:
    start, end = call.q_int("start"), call.q_int("end")
    if start is None or end is None:
        raise bad_request("Both start and end are required")
    priority = call.q("priority")
    sources = [s.strip().lower() for s in (call.q("sources") or "").split(",") if s.strip()]
    tags = [t.strip() for t in (call.q("tags") or "").split(",") if t.strip()]
    page = call.q_int("page", 0, low=0) or 0
    call.state.evaluate_all()
    found = []
    for event in reversed(call.state.events):
        if not start <= event.at <= end:
            continue
        if priority and event.priority != priority:
            continue
        if sources and (event.source_type_name or "").lower() not in sources:
            continue
        if tags and not all(t in event.tags for t in tags):
            continue
        found.append(event.v1(call.replica.base_url))
    return Reply(200, {"events": found[page * PAGE_V1 : (page + 1) * PAGE_V1], "status": "ok"})


@route("GET", "/api/v1/events/{event_id}")
def get_event(call: Call) -> Reply:
    text = call.params["event_id"]
    event = call.state.events_by_id.get(int(text)) if is_plain_int(text) else None
    if event is None:
        raise not_found("Event not found")
    return Reply(200, {"event": event.v1(call.replica.base_url)})


def _search(
    call: Call,
    query: str | None,
    start: str | None,
    end: str | None,
    sort: str | None,
    cursor: str | None,
    limit: int,
    base_query: dict[str, str],
) -> Reply:
    state = call.state
    state.evaluate_all()
    now = state.now()
    t0 = parse_when(start or "now-15m", now)
    t1 = parse_when(end or "now", now)
    if t0 is None or t1 is None:
        raise bad_request("Invalid time range: filter[from] and filter[to] take dates, now-15m, or epoch ms")
    if sort not in (None, "timestamp", "-timestamp"):
        raise bad_request(f"Invalid sort: {sort}")
    try:
        match, _ = compile_query(query)
    except QuerySyntaxError as exc:
        raise bad_request(f"Invalid query: {exc}") from None
    ascending = sort == "timestamp"
    after = decode_cursor(cursor) if cursor else None
    if cursor and after is None:
        raise bad_request(BAD_CURSOR)
    events = [e for e in state.events if t0 <= e.at <= t1]
    if not ascending:
        events.reverse()
    if after is not None:
        events = [e for e in events if ((e.at, e.id) > after) == ascending and (e.at, e.id) != after]
    page: list[Event] = []
    for event in events:
        if match(event.line()):
            page.append(event)
            if len(page) >= limit:
                break
    meta: dict[str, Any] = {
        "elapsed": 1,
        "request_id": state.world.random_hex(26),
        "status": "done",
        "warnings": [],
    }
    body: dict[str, Any] = {"data": [e.v2() for e in page], "meta": meta}
    if page:  # as Datadog does: a cursor on every non-empty page, a short one too
        token = encode_cursor((page[-1].at, page[-1].id))
        meta["page"] = {"after": token}
        body["links"] = {
            "next": f"{call.replica.base_url}/api/v2/events?"
            + urlencode({**base_query, "page[cursor]": token})
        }
    return Reply(200, body)


@route("GET", "/api/v2/events")
def list_events_v2(call: Call) -> Reply:
    limit = call.q_int("page[limit]", 10, low=1, high=1000) or 10
    base = {k: v[-1] for k, v in call.query.items() if k != "page[cursor]"}
    return _search(
        call,
        call.q("filter[query]"),
        call.q("filter[from]"),
        call.q("filter[to]"),
        call.q("sort"),
        call.q("page[cursor]"),
        limit,
        base,
    )


@route("POST", "/api/v2/events/search")
def search_events(call: Call) -> Reply:
    data = call.json() or {}
    if not isinstance(data, dict):
        raise bad_request("Invalid JSON: expected an object")
    flt, page = data.get("filter") or {}, data.get("page") or {}
    if not isinstance(flt, dict) or not isinstance(page, dict):
        raise bad_request("filter and page must be objects")
    limit = page.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise bad_request("page.limit must be an integer between 1 and 1000")
    for key in ("query", "from", "to"):
        if flt.get(key) is not None and not isinstance(flt[key], str):
            raise bad_request(f"filter.{key} must be a string")
    if page.get("cursor") is not None and not isinstance(page["cursor"], str):
        raise bad_request("page.cursor must be a string")
    sort = data.get("sort")
    if sort is not None and not isinstance(sort, str):
        raise bad_request("sort must be timestamp or -timestamp")
    base = {
        "filter[query]": flt.get("query") or "*",
        "filter[from]": flt.get("from") or "now-15m",
        "filter[to]": flt.get("to") or "now",
        "page[limit]": str(limit),
    }
    return _search(
        call, flt.get("query"), flt.get("from"), flt.get("to"), sort, page.get("cursor"), limit, base
    )
