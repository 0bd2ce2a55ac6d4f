"""Downtimes (v2): create, get, list, update, cancel; one-time schedules in simulated time."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.downtimes import Downtime
from ancha.world.tools.datadog.errors import bad_request, not_found
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.wire import parse_iso

_END_STATES = {"alert", "no data", "warn"}
_END_TYPES = {"canceled", "expired"}


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


def _schedule(value: Any, now: float, current: tuple[float, float | None] | None = None) -> tuple[float, float | None]:
    if value is None:
        return current or (now, None)
    if not isinstance(value, dict):
        raise bad_request("schedule must be an object")
    if "recurrences" in value:
        raise bad_request("Recurring downtime schedules are not supported by this replica; use a one-time schedule")
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
        downtime.scope = attributes["scope"]
    if "display_timezone" in attributes:
        downtime.display_timezone = str(attributes["display_timezone"] or "UTC")
    if "mute_first_recovery_notification" in attributes:
        downtime.mute_first_recovery_notification = bool(attributes["mute_first_recovery_notification"])
    for key, allowed in (("notify_end_states", _END_STATES), ("notify_end_types", _END_TYPES)):
        if key in attributes:
            values = attributes[key]
            if not isinstance(values, list) or not all(v in allowed for v in values):
                raise bad_request(f"{key} must be a list of: {', '.join(sorted(allowed))}")
            setattr(downtime, key, list(values))


def _publish(call: Call, kind: str, downtime: Downtime, at: float) -> None:
    call.state.world.bus.publish(domain_event(kind, at, call.actor, downtime=downtime.id, monitor=downtime.monitor_id,
                                            monitor_tags=list(downtime.monitor_tags)))


@route("POST", "/api/v2/downtime", partial="one-time schedules only (recurring ones answer 400)")
def create_downtime(call: Call) -> Reply:
    attributes = _data(call)["attributes"]
    if "scope" not in attributes:
        raise bad_request("Invalid request: scope is required")
    if "monitor_identifier" not in attributes:
        raise bad_request("Invalid request: monitor_identifier is required")
    state = call.state
    at = state.stamp()
    monitor_id, tags = _identifier(call, attributes["monitor_identifier"])
    start, end = _schedule(attributes.get("schedule"), at)
    downtime = Downtime(id=state.new_downtime_id(), scope="*", start=start, end=end, created=at, modified=at,
                        monitor_id=monitor_id, monitor_tags=tags, actor=call.actor)
    _options(attributes, downtime)
    state.downtimes[downtime.id] = downtime
    _publish(call, "downtime_created", downtime, at)
    return Reply(200, {"data": downtime.to_dict(state.now())})


def _downtime(call: Call) -> Downtime:
    found = call.state.downtimes.get(call.params["downtime_id"])
    if found is None:
        raise not_found("downtime not found")
    return found


@route("GET", "/api/v2/downtime/{downtime_id}", partial="include is ignored")
def get_downtime(call: Call) -> Reply:
    return Reply(200, {"data": _downtime(call).to_dict(call.state.now())})


@route("GET", "/api/v2/downtime", partial="include is ignored")
def list_downtimes(call: Call) -> Reply:
    now = call.state.now()
    offset = call.q_int("page[offset]", 0, low=0) or 0
    limit = call.q_int("page[limit]", 30, low=1, high=100) or 30
    found = list(call.state.downtimes.values())
    if call.q_bool("current_only"):
        found = [d for d in found if d.active(now)]
    return Reply(200, {"data": [d.to_dict(now) for d in found[offset:offset + limit]],
                       "meta": {"page": {"total_filtered_count": len(found)}}})


@route("PATCH", "/api/v2/downtime/{downtime_id}", partial="one-time schedules only")
def update_downtime(call: Call) -> Reply:
    downtime = _downtime(call)
    data = _data(call)
    attributes = data["attributes"]
    state = call.state
    if downtime.canceled is not None:
        raise bad_request("Cannot update a canceled downtime")
    if "monitor_identifier" in attributes:
        downtime.monitor_id, downtime.monitor_tags = _identifier(call, attributes["monitor_identifier"])
    if "schedule" in attributes:
        downtime.start, downtime.end = _schedule(attributes["schedule"], state.now(), (downtime.start, downtime.end))
    _options(attributes, downtime)
    downtime.modified = state.stamp()
    _publish(call, "downtime_updated", downtime, downtime.modified)
    return Reply(200, {"data": downtime.to_dict(state.now())})


@route("DELETE", "/api/v2/downtime/{downtime_id}")
def cancel_downtime(call: Call) -> Reply:
    downtime = _downtime(call)
    if downtime.canceled is None:
        downtime.canceled = call.state.stamp()
        downtime.modified = downtime.canceled
        _publish(call, "downtime_canceled", downtime, downtime.canceled)
    return Reply(204, None)
