"""Downtimes (v2): create, get, list, update, cancel; one-time and recurring (RRULE) schedules
in simulated time."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.downtimes import (
    LOCAL_MINUTE,
    Downtime,
    Recurrence,
    creator_user,
    duration_seconds,
)
from ancha.world.tools.datadog.errors import bad_request, not_found
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.wire import parse_iso

_END_STATES = {"alert", "no data", "warn"}
_END_TYPES = {"canceled", "expired"}
_ATTRIBUTES = (
    "display_timezone",
    "message",
    "monitor_identifier",
    "mute_first_recovery_notification",
    "notify_end_states",
    "notify_end_types",
    "schedule",
    "scope",
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_OPERATORS = {"AND", "OR", "NOT"}
_RRULE_FORBIDDEN = ("DTSTART", "DTEND", "DURATION")


def scope_problem(scope: str) -> str | None:
    """Datadog's answer to a scope whose terms are not all ``key:value`` (``*`` is all)."""
    text = scope.strip()
    if text == "*":
        return None
    for term in re.findall(r'(?:[^\s()"]|"[^"]*")+', text):
        if term.upper() in _OPERATORS:
            continue
        key, colon, _ = term.lstrip("-!").partition(":")
        if not colon or not key:
            return "All values must have a key"
    return None


def _unexpected(attributes: dict[str, Any]) -> None:
    extra = [k for k in attributes if k not in _ATTRIBUTES]
    if extra:
        names = ", ".join(repr(k) for k in extra)
        raise bad_request(
            f"Additional properties are not allowed ({names} {'was' if len(extra) == 1 else 'were'} "
            "unexpected)"
        )


def _data(call: Call) -> dict[str, Any]:
    body = call.object()
    data = body.get("data")
    if not isinstance(data, dict):
        raise bad_request("Invalid request: data is required")
    if data.get("type") != "downtime":
        raise bad_request("Invalid request: data.type must be 'downtime'")
    attributes = data.get("attributes")
    if not isinstance(attributes, dict):
        raise bad_request("Invalid request: data.attributes is required")
    return data


def _identifier(call: Call, value: Any) -> tuple[int | None, list[str]]:
    if not isinstance(value, dict):
        raise bad_request("monitor_identifier must be an object with monitor_id or monitor_tags")
    if "monitor_id" in value:
        monitor_id = value["monitor_id"]
        if isinstance(monitor_id, bool) or not isinstance(monitor_id, int):
            raise bad_request("monitor_identifier.monitor_id must be an integer")
        if call.state.monitor(monitor_id) is None:
            raise bad_request(f"Monitor {monitor_id} not found")
        return monitor_id, []
    tags = value.get("monitor_tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) and t for t in tags):
        raise bad_request("monitor_identifier.monitor_tags must be a non-empty list of tags")
    return None, list(tags)


def _schedule(
    value: Any, now: float, current: tuple[float, float | None] | None = None
) -> tuple[float, float | None]:
    if value is None:
        return current or (now, None)
    if not isinstance(value, dict):
        raise bad_request("schedule must be an object")
    start, end = current or (now, None)
    if "start" in value:
        start = now if value["start"] is None else _time(value["start"], "start")
    if "end" in value:
        end = None if value["end"] is None else _time(value["end"], "end")
    if end is not None and end <= start:
        raise bad_request("Downtime schedule end must be after its start")
    return start, end


def _time(value: Any, name: str) -> float:
    found = parse_iso(value)
    if found is None:
        raise bad_request(f"schedule.{name} must be an ISO 8601 date-time, got {value!r}")
    return found


def _options(attributes: dict[str, Any], downtime: Downtime) -> None:
    if "message" in attributes:
        if attributes["message"] is not None and not isinstance(attributes["message"], str):
            raise bad_request("message must be a string")
        downtime.message = attributes["message"] or ""
    if "scope" in attributes:
        if not isinstance(attributes["scope"], str) or not attributes["scope"].strip():
            raise bad_request("scope must be a non-empty string, such as env:prod or *")
        problem = scope_problem(attributes["scope"])
        if problem:
            raise bad_request(problem)
        downtime.scope = attributes["scope"]
    if "display_timezone" in attributes:
        downtime.display_timezone = _zone(attributes["display_timezone"] or "UTC", "display_timezone")
    if "mute_first_recovery_notification" in attributes:
        downtime.mute_first_recovery_notification = bool(attributes["mute_first_recovery_notification"])
    for key, allowed in (("notify_end_states", _END_STATES), ("notify_end_types", _END_TYPES)):
        if key in attributes:
            values = attributes[key]
            if not isinstance(values, list) or not all(v in allowed for v in values):
                raise bad_request(f"{key} must be a list of: {', '.join(sorted(allowed))}")
            setattr(downtime, key, list(values))


def _zone(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise bad_request(f"{name} must be a timezone name, such as UTC or Europe/Paris")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise bad_request(f"Invalid {name}: {value!r} is not a known timezone") from None
    return value


def _recurrences(
    value: dict[str, Any], now: float, current: list[Recurrence] | None = None
) -> tuple[list[Recurrence], str]:
    """A recurring schedule's recurrences and its timezone (``recurrences`` given in ``value``)."""
    zone = _zone(value.get("timezone") or "UTC", "schedule.timezone")
    items = value.get("recurrences")
    if not isinstance(items, list) or not 1 <= len(items) <= 5:
        raise bad_request("schedule.recurrences must be a list of 1 to 5 recurrences")
    local_now = datetime.fromtimestamp(now, UTC).astimezone(ZoneInfo(zone)).strftime(LOCAL_MINUTE)
    out: list[Recurrence] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise bad_request(f"schedule.recurrences[{i}] must be an object with rrule, duration and start")
        old = current[i] if current and i < len(current) else None
        rule, duration = (
            item.get("rrule", old.rrule if old else None),
            item.get("duration", old.duration if old else None),
        )
        if not isinstance(duration, str) or duration_seconds(duration) is None:
            raise bad_request(
                f"Invalid duration: {duration!r}; it must begin with an integer and end with one of "
                "'m', 'h', 'd', or 'w'"
            )
        if not isinstance(rule, str) or not rule.strip():
            raise bad_request(f"schedule.recurrences[{i}].rrule is required, such as FREQ=WEEKLY;BYDAY=MO")
        if any(key in rule.upper() for key in _RRULE_FORBIDDEN):
            raise bad_request(
                "Invalid rrule: attributes specifying the duration (DTSTART, DTEND, DURATION) are "
                "not supported"
            )
        start = item.get("start")
        if start is None:
            start = old.start if old else local_now
        elif not isinstance(start, str):
            raise bad_request(
                "schedule.recurrences.start must be a date-time without a UTC offset, such as "
                "2026-03-02T09:00"
            )
        else:
            try:
                start = datetime.fromisoformat(start).strftime(LOCAL_MINUTE)
            except ValueError:
                raise bad_request(
                    f"Invalid start: {start!r}; expected a date-time such as 2026-03-02T09:00"
                ) from None
        recurrence = Recurrence(rule.strip(), duration, start, zone)
        problem = recurrence.problem(now)
        if problem:
            raise bad_request(problem)
        out.append(recurrence)
    return out, zone


def _apply_schedule(downtime: Downtime, value: Any, now: float) -> None:
    if isinstance(value, dict) and "recurrences" in value:
        downtime.recurrences, downtime.display_timezone = _recurrences(value, now, downtime.recurrences)
        occurrence = downtime.current(now)
        if occurrence is not None:
            downtime.start, downtime.end = occurrence
        return
    if isinstance(value, dict) and downtime.recurrences and "timezone" in value:
        downtime.display_timezone = _zone(value["timezone"], "schedule.timezone")
        return
    downtime.recurrences = []
    downtime.start, downtime.end = _schedule(value, now, (downtime.start, downtime.end))


def _answer(call: Call, downtime: Downtime, includes: tuple[str, ...]) -> dict[str, Any]:
    """``data`` with ``relationships`` and ``included`` (the creator, the monitor) as asked."""
    state = call.state
    body: dict[str, Any] = {"data": downtime.to_dict(state.now(), relationships=bool(includes))}
    included: list[dict[str, Any]] = []
    if "created_by" in includes:
        included.append(creator_user())
    if "monitor" in includes and downtime.monitor_id is not None:
        monitor = state.monitor(downtime.monitor_id)
        if monitor is not None:
            included.append({"type": "monitors", "id": monitor.id, "attributes": {"name": monitor.name}})
    if includes:
        body["included"] = included
    return body


def _includes(call: Call) -> tuple[str, ...]:
    text = call.q("include") or ""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for name in names:
        if name not in ("created_by", "monitor"):
            raise bad_request(f"Invalid include: {name!r}; expected created_by and/or monitor")
    return names


def publish(call: Call, kind: str, downtime: Downtime, at: float) -> None:
    """Tell the world a downtime changed (either API's call: v1 and v2 are views of one downtime)."""
    call.state.world.bus.publish(
        domain_event(
            kind,
            at,
            call.actor,
            downtime=downtime.id,
            monitor=downtime.monitor_id,
            monitor_tags=list(downtime.monitor_tags),
        )
    )


@route("POST", "/api/v2/downtime")
def create_downtime(call: Call) -> Reply:
    attributes = _data(call)["attributes"]
    _unexpected(attributes)
    if "scope" not in attributes:
        raise bad_request("Invalid request: scope is required")
    if "monitor_identifier" not in attributes:
        raise bad_request("Invalid request: monitor_identifier is required")
    state = call.state
    at = state.stamp()
    monitor_id, tags = _identifier(call, attributes["monitor_identifier"])
    downtime = Downtime(
        id=state.new_downtime_id(),
        scope="*",
        start=at,
        end=None,
        created=at,
        modified=at,
        monitor_id=monitor_id,
        monitor_tags=tags,
        actor=call.actor,
    )
    _options(attributes, downtime)
    _apply_schedule(downtime, attributes.get("schedule"), at)
    state.downtimes[downtime.id] = downtime
    publish(call, "downtime_created", downtime, at)
    return Reply(200, _answer(call, downtime, ("created_by", "monitor")))


def _downtime(call: Call, missing: str = "Downtime not found") -> Downtime:
    downtime_id = call.params["downtime_id"]
    if not _UUID.match(downtime_id):
        raise bad_request("Invalid URL param: downtime_id must be an uuid")
    found = call.state.downtimes.get(downtime_id)
    if found is None:
        raise not_found(missing)
    return found


@route("GET", "/api/v2/downtime/{downtime_id}")
def get_downtime(call: Call) -> Reply:
    return Reply(200, _answer(call, _downtime(call), _includes(call)))


@route("GET", "/api/v2/downtime")
def list_downtimes(call: Call) -> Reply:
    now = call.state.now()
    offset = call.q_int("page[offset]", 0, low=0) or 0
    limit = call.q_int("page[limit]", 30, low=1, high=100) or 30
    includes = _includes(call)
    found = list(call.state.downtimes.values())
    if call.q_bool("current_only"):
        found = [d for d in found if d.active(now)]
    page = [_answer(call, d, includes) for d in found[offset : offset + limit]]
    body: dict[str, Any] = {
        "data": [p["data"] for p in page],
        "meta": {"page": {"total_filtered_count": len(found)}},
    }
    if includes:
        seen: dict[tuple[str, str], dict[str, Any]] = {}
        for p in page:
            for item in p["included"]:
                seen.setdefault((item["type"], str(item["id"])), item)
        body["included"] = list(seen.values())
    return Reply(200, body)


@route("PATCH", "/api/v2/downtime/{downtime_id}")
def update_downtime(call: Call) -> Reply:
    downtime = _downtime(call)
    data = _data(call)
    attributes = data["attributes"]
    _unexpected(attributes)
    state = call.state
    if downtime.canceled is not None:
        raise bad_request("Cannot update a canceled downtime")
    if "monitor_identifier" in attributes:
        downtime.monitor_id, downtime.monitor_tags = _identifier(call, attributes["monitor_identifier"])
    _options(attributes, downtime)
    if "schedule" in attributes:
        _apply_schedule(downtime, attributes["schedule"], state.now())
    downtime.modified = state.stamp()
    publish(call, "downtime_updated", downtime, downtime.modified)
    return Reply(200, _answer(call, downtime, ("created_by", "monitor")))


@route("DELETE", "/api/v2/downtime/{downtime_id}")
def cancel_downtime(call: Call) -> Reply:
    downtime = _downtime(call, f"Downtime {call.params['downtime_id']} not found")
    if downtime.canceled is None:
        downtime.canceled = call.state.stamp()
        downtime.modified = downtime.canceled
        publish(call, "downtime_canceled", downtime, downtime.canceled)
    return Reply(204, None)
