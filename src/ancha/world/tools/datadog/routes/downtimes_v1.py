"""Downtimes (v1): schedule, get, list, update, cancel, and cancel by scope.

v1 and v2 are two views of the same downtimes: one scheduled here is listed by
``/api/v2/downtime`` (its scope list joined with ``AND``) and the other way round. A v1
``recurrence`` (``days``/``weeks``/``months``/``years`` every ``period``, ``week_days``,
``until_occurrences`` or ``until_date``, or ``rrule``) becomes an RRULE whose occurrences
last ``end - start``, so a recurring downtime is active, and silences, only within them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ancha.world.kernel.plain_numbers import is_plain_int
from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.downtimes import LOCAL_MINUTE, Downtime, Recurrence
from ancha.world.tools.datadog.errors import bad_request, not_found
from ancha.world.tools.datadog.monitors import CREATOR, ORG_ID
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.routes.downtimes import publish

_FREQ = {"days": "DAILY", "weeks": "WEEKLY", "months": "MONTHLY", "years": "YEARLY"}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_END_STATES = {"alert", "no data", "warn"}
_END_TYPES = {"canceled", "expired"}


def _creator_id() -> int | None:
    value = CREATOR.get("id")
    return value if isinstance(value, int) else None


def _downtime_type(downtime: Downtime, recurring: bool) -> int:
    """As Datadog reports it: 0 for monitor tags, 2 for a monitor id or a recurrence, else 1."""
    if downtime.monitor_id is None and (downtime.monitor_tags or ["*"]) != ["*"]:
        return 0
    return 2 if downtime.monitor_id is not None or recurring else 1


def v1(downtime: Downtime, now: float, with_creator: bool = False) -> dict[str, Any]:
    """The v1 ``Downtime`` shape."""
    status = downtime.status(now)
    recurrence = downtime.v1_recurrence
    if recurrence is None and downtime.recurrences:
        first = downtime.recurrences[0]
        recurrence = {
            "type": "rrule",
            "rrule": first.rrule,
            "period": None,
            "week_days": None,
            "until_occurrences": None,
            "until_date": None,
        }
    out: dict[str, Any] = {
        "id": downtime.v1_id,
        "monitor_id": downtime.monitor_id,
        "org_id": ORG_ID,
        "start": int(downtime.start),
        "end": int(downtime.end) if downtime.end is not None else None,
        "canceled": int(downtime.canceled) if downtime.canceled is not None else None,
        "created": int(downtime.created),
        "modified": int(downtime.modified),
        "message": downtime.message or None,
        "active": status == "active",
        "disabled": downtime.canceled is not None,
        "recurrence": recurrence,
        "timezone": downtime.v1_timezone or downtime.display_timezone,
        "parent_id": None,
        "child_id": None,
        "creator_id": _creator_id(),
        "updater_id": _creator_id() if downtime.updated else None,
        "downtime_type": _downtime_type(downtime, recurrence is not None),
        "status": status,
        "monitor_tags": list(downtime.monitor_tags) or ["*"],
        "mute_first_recovery_notification": downtime.mute_first_recovery_notification,
        "notify_end_types": list(downtime.notify_end_types),
        "notify_end_states": list(downtime.notify_end_states),
        "uuid": downtime.id,
        "scope": list(downtime.v1_scope or [downtime.scope]),
    }
    if with_creator:
        out["creator"] = {
            "id": _creator_id(),
            "email": CREATOR["email"],
            "handle": CREATOR["handle"],
            "name": CREATOR["name"],
        }
    return out


def _epoch(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_request(f"Invalid {name}: expected a POSIX timestamp in seconds")
    return float(value)


def _zone(value: Any) -> str:
    if value is None:
        return "UTC"
    if not isinstance(value, str):
        raise bad_request("Invalid timezone")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise bad_request(f"Invalid timezone: {value}") from None
    return value


def _rrule(recurrence: Any) -> str:
    """A v1 ``recurrence`` as an RRULE, refused as Datadog refuses it."""
    if not isinstance(recurrence, dict):
        raise bad_request("Invalid recurrence")
    kind = recurrence.get("type")
    if kind == "rrule":
        rule = recurrence.get("rrule")
        if not isinstance(rule, str) or not rule.strip():
            raise bad_request("Invalid recurrence: rrule is required for the rrule type")
        return rule.strip()
    if kind not in _FREQ:
        raise bad_request("Invalid recurrence type")
    period = recurrence.get("period", 1)
    if isinstance(period, bool) or not isinstance(period, int) or period < 1:
        raise bad_request("Invalid recurrence period")
    parts = [f"FREQ={_FREQ[kind]}", f"INTERVAL={period}"]
    days = recurrence.get("week_days")
    if days is not None:
        if kind != "weeks" or not isinstance(days, list) or not days or not all(d in _DAYS for d in days):
            raise bad_request(
                "Invalid set of days in week_days. Be sure that the first letter is capitalized."
            )
        parts.append("BYDAY=" + ",".join(d[:2].upper() for d in days))
    count, until = recurrence.get("until_occurrences"), recurrence.get("until_date")
    if count is not None and until is not None:
        raise bad_request("You must provide only provide one of (until_occurrences, until_date)")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise bad_request("Invalid until_occurrences")
        parts.append(f"COUNT={count}")
    if until is not None:
        at = _epoch(until, "until_date")
        assert at is not None
        parts.append("UNTIL=" + datetime.fromtimestamp(at, UTC).strftime("%Y%m%dT%H%M%SZ"))
    return ";".join(parts)


def _recurrence(downtime: Downtime, recurrence: Any, zone: str, now: float) -> None:
    if recurrence is None:
        downtime.v1_recurrence, downtime.recurrences = None, []
        return
    rule = _rrule(recurrence)
    if downtime.end is None:
        raise bad_request(
            "Invalid recurrence: a recurring downtime needs an end (each occurrence lasts end - start)"
        )
    minutes = max(1, -(-int(downtime.end - downtime.start) // 60))
    local = datetime.fromtimestamp(downtime.start, UTC).astimezone(ZoneInfo(zone)).strftime(LOCAL_MINUTE)
    candidate = Recurrence(rule, f"{minutes}m", local, zone)
    problem = candidate.problem(now)
    if problem:
        raise bad_request(problem)
    downtime.recurrences = [candidate]
    downtime.v1_recurrence = {
        "type": recurrence.get("type"),
        "period": recurrence.get("period", 1 if recurrence.get("type") != "rrule" else None),
        "week_days": recurrence.get("week_days"),
        "until_occurrences": recurrence.get("until_occurrences"),
        "until_date": recurrence.get("until_date"),
        **({"rrule": recurrence["rrule"]} if recurrence.get("type") == "rrule" else {}),
    }


def _apply(call: Call, downtime: Downtime, body: dict[str, Any], creating: bool) -> None:
    if "scope" in body or creating:
        scope = body.get("scope")
        if isinstance(scope, str):
            scope = [scope]
        if not isinstance(scope, list) or not scope or not all(isinstance(s, str) and s for s in scope):
            raise bad_request("Invalid scope parameter")
        downtime.v1_scope = list(scope)
        downtime.scope = " AND ".join(scope)
    if "monitor_id" in body and body["monitor_id"] is not None:
        monitor_id = body["monitor_id"]
        if (
            isinstance(monitor_id, bool)
            or not isinstance(monitor_id, int)
            or call.state.monitor(monitor_id) is None
        ):
            raise bad_request(f"Monitor {monitor_id} not found")
        downtime.monitor_id, downtime.monitor_tags = monitor_id, []
    elif "monitor_tags" in body or creating:
        tags = body.get("monitor_tags") or ["*"]
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise bad_request("Invalid monitor_tags parameter")
        if "monitor_id" not in body or body.get("monitor_id") is None:
            downtime.monitor_id, downtime.monitor_tags = None, list(tags)
    if "message" in body:
        if body["message"] is not None and not isinstance(body["message"], str):
            raise bad_request("Invalid message parameter")
        downtime.message = body["message"] or ""
    if "mute_first_recovery_notification" in body:
        downtime.mute_first_recovery_notification = bool(body["mute_first_recovery_notification"])
    for key, allowed in (("notify_end_states", _END_STATES), ("notify_end_types", _END_TYPES)):
        if key in body:
            values = body[key]
            if not isinstance(values, list) or not all(v in allowed for v in values):
                raise bad_request(f"Invalid {key} parameter: expected a list of {', '.join(sorted(allowed))}")
            setattr(downtime, key, list(values))
    zone = _zone(body["timezone"]) if "timezone" in body else (downtime.v1_timezone or "UTC")
    downtime.v1_timezone = zone
    now = call.state.now()
    if "start" in body:
        downtime.start = _epoch(body["start"], "start") or now
    if "end" in body:
        downtime.end = _epoch(body["end"], "end")
    if downtime.end is not None and downtime.end <= downtime.start:
        raise bad_request("Invalid end: the downtime must end after it starts")
    if "recurrence" in body or (
        downtime.v1_recurrence is not None and {"start", "end", "timezone"} & set(body)
    ):
        _recurrence(downtime, body.get("recurrence", downtime.v1_recurrence), zone, now)


def _find(call: Call, missing: str | None = None) -> Downtime:
    text = call.params["downtime_id"]
    if is_plain_int(text):
        wanted = int(text)
        for downtime in call.state.downtimes.values():
            if downtime.v1_id == wanted:
                return downtime
    raise not_found(missing or "Downtime not found")


@route("POST", "/api/v1/downtime")
def create_downtime_v1(call: Call) -> Reply:
    body = call.object()
    state = call.state
    at = state.stamp()
    downtime = Downtime(
        id=state.new_downtime_id(), scope="*", start=at, end=None, created=at, modified=at, actor=call.actor
    )
    _apply(call, downtime, body, creating=True)
    state.downtimes[downtime.id] = downtime
    publish(call, "downtime_created", downtime, at)
    return Reply(200, v1(downtime, state.now()))


@route("GET", "/api/v1/downtime")
def list_downtimes_v1(call: Call) -> Reply:
    now = call.state.now()
    found = list(call.state.downtimes.values())
    if call.q_bool("current_only"):
        found = [d for d in found if d.active(now)]
    return Reply(200, [v1(d, now, call.q_bool("with_creator")) for d in found])


@route("GET", "/api/v1/downtime/{downtime_id}")
def get_downtime_v1(call: Call) -> Reply:
    return Reply(200, v1(_find(call), call.state.now()))


@route("PUT", "/api/v1/downtime/{downtime_id}")
def update_downtime_v1(call: Call) -> Reply:
    downtime = _find(call)
    body = call.object()
    if downtime.canceled is not None:
        raise bad_request("Cannot update a canceled downtime")
    _apply(call, downtime, body, creating=False)
    downtime.updated = True
    downtime.modified = call.state.stamp()
    publish(call, "downtime_updated", downtime, downtime.modified)
    return Reply(200, v1(downtime, call.state.now()))


@route("DELETE", "/api/v1/downtime/{downtime_id}")
def cancel_downtime_v1(call: Call) -> Reply:
    downtime = _find(call, f"Downtime {call.params['downtime_id']} not found")
    if downtime.canceled is None:
        downtime.canceled = downtime.modified = call.state.stamp()
        publish(call, "downtime_canceled", downtime, downtime.canceled)
    return Reply(204, None)


@route("POST", "/api/v1/downtime/cancel/by_scope")
def cancel_downtimes_by_scope(call: Call) -> Reply:
    scope = call.object().get("scope")
    if not isinstance(scope, str) or not scope.strip():
        raise bad_request("Invalid scope parameter")
    state = call.state
    now = state.now()
    found = [
        d
        for d in state.downtimes.values()
        if d.canceled is None
        and d.status(now) != "ended"
        and (scope in (d.v1_scope or []) or scope == d.scope)
    ]
    if not found:
        raise not_found("No downtimes found")
    at = state.stamp()
    for downtime in found:
        downtime.canceled = downtime.modified = at
        publish(call, "downtime_canceled", downtime, at)
    return Reply(200, {"cancelled_ids": [d.v1_id for d in found]})


@route("GET", "/api/v1/monitor/{monitor_id}/downtimes")
def monitor_downtimes_v1(call: Call) -> Reply:
    """The active downtimes (v1 shape) that silence one monitor."""
    text = call.params["monitor_id"]
    monitor = call.state.monitor(int(text)) if is_plain_int(text) else None
    if monitor is None:
        raise not_found(f"Monitor with id {text} not found")
    now = call.state.now()
    return Reply(
        200, [v1(d, now) for d in call.state.downtimes.values() if d.active(now) and d.targets(monitor)]
    )
