"""The System Log: ``GET /api/v1/logs`` (since, until, filter, q, sortOrder, limit, after).

A *bounded* query (one with ``until``) ends: its last page has no ``next`` link. A
*polling* query (no ``until``, ascending) never ends: Okta always answers a ``next`` link,
to be followed later for the events that happen meanwhile (an empty page keeps the same
cursor). ``since`` (inclusive) defaults to 7 days before ``until`` (exclusive), ``until`` to now (the
world clock).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ancha.world.tools.okta import errors
from ancha.world.tools.okta.call import Answer, Call
from ancha.world.tools.okta.filters import compile_expression, multi_getter
from ancha.world.tools.okta.router import route
from ancha.world.tools.okta.routes import pages
from ancha.world.tools.okta.system_log import LogEntry

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
DEFAULT_WINDOW_S = 7 * 86400
MAX_KEYWORDS = 10
MAX_KEYWORD = 40
_DATE_CAUSE = (
    "The date format in your query is not recognized. Please enter dates using ISO8601 string "
    "format.. '{name}' must be an ISO 8601 compliant timestamp."
)


def _time(call: Call, name: str) -> float | None:
    value = call.arg(name)
    if value is None or value == "":
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise errors.ApiValidation(name, f"{name}: {_DATE_CAUSE.format(name=name)}") from None
    if moment.tzinfo is None:
        raise errors.ApiValidation(name, f"{name}: {_DATE_CAUSE.format(name=name)}")
    return moment.timestamp()


def _ms(at: float) -> int:
    return int(at * 1000)


def _keywords(call: Call) -> list[str]:
    words = (call.arg("q") or "").split()
    if len(words) > MAX_KEYWORDS or any(len(w) > MAX_KEYWORD for w in words):
        raise errors.ApiValidation(
            "q",
            f"q: Max length is {MAX_KEYWORD} characters per keyword, with a maximum "
            f"of {MAX_KEYWORDS} keyword filters per query",
        )
    return [w.casefold() for w in words]


def _text(value: Any) -> str:
    """Every string of a log event, lowercased (what ``q`` keywords are looked for in)."""
    if isinstance(value, dict):
        return " ".join(_text(v) for v in value.values())
    if isinstance(value, list):
        return " ".join(_text(v) for v in value)
    return value.casefold() if isinstance(value, str) else ""


@route("GET", "/api/v1/logs")
def list_log_events(call: Call) -> Answer:
    replica = call.replica
    now = replica.world.clock.now()
    until = _time(call, "until")
    bounded = until is not None
    end = until if until is not None else now
    since = _time(call, "since")
    start = since if since is not None else end - DEFAULT_WINDOW_S
    if since is not None and until is not None and since > until:
        raise errors.ApiValidation("since", "since: The 'since' date must be before the 'until' date.")
    order = (call.arg("sortOrder") or "ASCENDING").upper()
    if order not in ("ASCENDING", "DESCENDING"):
        raise errors.ApiValidation("sortOrder", "sortOrder: The value must be ASCENDING or DESCENDING.")
    limit = call.integer("limit", DEFAULT_LIMIT, 0, MAX_LIMIT)
    text = call.arg("filter")
    matcher = compile_expression(text, None) if text else None
    keywords = _keywords(call)

    low, high = _ms(start), _ms(end)

    def keep(entry: LogEntry) -> bool:
        at = _ms(entry.at)  # published has milliseconds: the bounds compare at that grain
        if at < low or (at >= high if bounded else at > high):
            return False
        if matcher is not None and not matcher(multi_getter(entry.body)):
            return False
        if keywords:
            haystack = _text(entry.body)
            return all(k in haystack for k in keywords)
        return True

    log = replica.log
    entries = log.entries if order == "ASCENDING" else list(reversed(log.entries))
    cursor = call.arg("after")
    begin = 0
    if cursor:
        if cursor not in log.index:
            raise errors.ApiValidation("after", "after: The cursor is not valid.")
        position = log.index[cursor]
        begin = position + 1 if order == "ASCENDING" else len(log.entries) - position
    found: list[LogEntry] = []
    more = False
    for entry in entries[begin:]:
        if not keep(entry):
            continue
        if len(found) == limit:
            more = True
            break
        found.append(entry)
    polling = not bounded and order == "ASCENDING"
    last = found[-1].uuid if found else cursor
    answer = pages.answer(call, [e.body for e in found], last, more or (polling and last is not None))
    if polling and last is None:  # an empty poll from the start: follow the same query later
        answer.headers["link"] += (
            f', <{pages.url(call, [(k, v) for k, vs in call.query.items() for v in vs])}>; rel="next"'
        )
    return answer
