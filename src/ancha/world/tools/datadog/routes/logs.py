"""Logs: v2 search (``POST /api/v2/logs/events/search``), list (``GET /api/v2/logs/events``)
and the intake (``POST /api/v2/logs``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.errors import ApiError, bad_request
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.log_query import QuerySyntaxError, compile_query
from ancha.world.tools.datadog.logs import decode_cursor, encode_cursor, wire
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.wire import parse_when

MAX_LIMIT = 1000
RESERVED = ("ddsource", "ddtags", "hostname", "message", "service", "status", "timestamp")


def search_logs(call: Call, query: str | None, start: str | None, end: str | None, sort: str | None,
                cursor: str | None, limit: int) -> Reply:
    """One page of matching logs, in Datadog's ``LogsListResponse``."""
    state = call.state
    now = state.now()
    t0 = parse_when(start or "now-15m", now)
    t1 = parse_when(end or "now", now)
    if t0 is None or t1 is None:
        raise bad_request("Invalid time range: from and to take ISO dates, now-15m, or epoch ms")
    if sort not in (None, "timestamp", "-timestamp"):
        raise bad_request(f"Invalid sort: {sort!r}; use timestamp or -timestamp")
    try:
        match, hints = compile_query(query)
    except QuerySyntaxError as exc:
        raise bad_request(f"Invalid query: {exc}") from None
    after = None
    if cursor:
        after = decode_cursor(cursor)
        if after is None:
            raise bad_request("Invalid page[cursor]")
    state.logs.catch_up(now)
    lines, next_key, timed_out = state.logs.search(match, hints, t0, t1, sort == "timestamp", limit, after)
    meta: dict[str, Any] = {"elapsed": 1, "request_id": state.world.random_hex(26),
                            "status": "timeout" if timed_out else "done"}
    if timed_out:
        meta["warnings"] = [{"code": "timeout", "title": "Partial results",
                             "detail": "The query took too long to run over the whole time range: these are the "
                                       "lines found before it stopped. Narrow the query or the time range."}]
    body: dict[str, Any] = {"data": [wire(line) for line in lines], "meta": meta}
    if next_key is not None:
        token = encode_cursor(next_key)
        meta["page"] = {"after": token}
        params = {"filter[query]": query or "*", "filter[from]": start or "now-15m", "filter[to]": end or "now",
                  "page[limit]": str(limit), "page[cursor]": token}
        if sort:
            params["sort"] = sort
        body["links"] = {"next": f"{call.replica.base_url}/api/v2/logs/events?{urlencode(params)}"}
    return Reply(200, body)


@route("POST", "/api/v2/logs/events/search", partial="indexes and storage_tier are accepted and ignored; "
       "options.timeOffset is not applied")
def list_logs(call: Call) -> Reply:
    data = call.json() or {}
    if not isinstance(data, dict):
        raise bad_request("Invalid JSON: expected an object")
    flt, page = data.get("filter") or {}, data.get("page") or {}
    if not isinstance(flt, dict) or not isinstance(page, dict):
        raise bad_request("filter and page must be objects")
    for key in ("query", "from", "to"):
        if flt.get(key) is not None and not isinstance(flt[key], str):
            raise bad_request(f"filter.{key} must be a string")
    limit = page.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise bad_request(f"page.limit must be an integer between 1 and {MAX_LIMIT}")
    cursor = page.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise bad_request("page.cursor must be a string")
    sort = data.get("sort")
    if sort is not None and not isinstance(sort, str):
        raise bad_request("sort must be timestamp or -timestamp")
    return search_logs(call, flt.get("query"), flt.get("from"), flt.get("to"), sort, cursor, limit)


@route("GET", "/api/v2/logs/events", partial="filter[indexes] and filter[storage_tier] are ignored")
def list_logs_get(call: Call) -> Reply:
    limit = call.q_int("page[limit]", 10, low=1, high=MAX_LIMIT) or 10
    return search_logs(call, call.q("filter[query]"), call.q("filter[from]"), call.q("filter[to]"), call.q("sort"),
                       call.q("page[cursor]"), limit)


@route("POST", "/api/v2/logs", app_key=False, partial="Content-Encoding (gzip, deflate) is not accepted")
def submit_log(call: Call) -> Reply:
    data = call.json()
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(i, dict) for i in items):
        raise bad_request("Invalid log payload: expected a log object or a list of them")
    if len(items) > 1000:
        raise ApiError(413, "Payload too large: at most 1000 logs per request")
    state = call.state
    at = state.stamp()
    for item in items:
        message = item.get("message")
        if not isinstance(message, str):
            raise bad_request("Invalid log payload: message must be a string")
        tags = [t.strip() for t in str(item.get("ddtags") or "").split(",") if t.strip()]
        attributes = {k: v for k, v in item.items() if k not in RESERVED}
        if item.get("ddsource"):
            attributes["source"] = item["ddsource"]
        when = item.get("timestamp")
        stamp = at
        if isinstance(when, (int, float)) and not isinstance(when, bool):
            stamp = when / 1000 if when > 10**11 else float(when)
        elif isinstance(when, str):
            stamp = parse_when(when, at) or at
        log = {"at": stamp, "service": str(item.get("service") or ""), "status": str(item.get("status") or "info"),
               "message": message, "attributes": attributes, "tags": tags}
        if item.get("hostname"):
            log["host"] = str(item["hostname"])
        state.logs.add(log)
    state.world.bus.publish(domain_event("logs_submitted", at, call.actor, count=len(items)))
    return Reply(202, {})
