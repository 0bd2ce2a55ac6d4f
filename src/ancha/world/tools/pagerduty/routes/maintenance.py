"""Maintenance windows: while one is on, its services create no incidents from events and
page nobody (``lifecycle``, ``events_api``, world triggers)."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.pagerduty.call import Call, paginated
from ancha.world.tools.pagerduty.errors import InvalidInput, NotFound, PagerDutyError
from ancha.world.tools.pagerduty.models import MaintenanceWindow, Service
from ancha.world.tools.pagerduty.params import object_id, parse_time
from ancha.world.tools.pagerduty.router import route
from ancha.world.tools.pagerduty.routes.teams import in_teams

FILTERS = ("past", "future", "ongoing")


class AlreadyEnded(PagerDutyError):
    status = 405
    code = 2001
    message = "Invalid Input Provided"

    def __init__(self) -> None:
        super().__init__("Maintenance windows that have already ended cannot be deleted.")


def _window(call: Call) -> MaintenanceWindow:
    found = call.state.maintenance_windows.get(call.params["id"])
    if found is None:
        raise NotFound()
    return found


def _state(window: MaintenanceWindow, now: float) -> str:
    return "past" if window.end <= now else "ongoing" if window.start <= now else "future"


@route("GET", "/maintenance_windows", partial="include[] is ignored")
def list_maintenance_windows(call: Call) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    wanted = q.get("filter")
    if wanted is not None and wanted not in FILTERS:
        raise InvalidInput("Filter must be one of past, future or ongoing.")
    now = call.desk.now()
    services = set(q.many("service_ids"))
    teams = in_teams(call)
    needle = (q.get("query") or "").lower()
    found = [
        w
        for w in sorted(call.state.maintenance_windows.values(), key=lambda w: w.start)
        if (wanted is None or _state(w, now) == wanted)
        and (not services or any(s.id in services for s in w.services))
        and (teams is None or any(t in teams for s in w.services for t in s.policy.teams))
        and needle in w.description.lower()
    ]
    page = found[offset : offset + limit]
    return paginated(
        "maintenance_windows",
        [w.to_dict(call.base) for w in page],
        limit,
        offset,
        len(found) if q.flag("total") else None,
        offset + limit < len(found),
    )


def _wrapped(call: Call) -> dict[str, Any]:
    data = call.body().get("maintenance_window")
    if not isinstance(data, dict):
        raise InvalidInput("Maintenance window must be an object.")
    kind = data.get("type")
    if kind is not None and kind not in ("maintenance_window", "maintenance_window_reference"):
        raise InvalidInput("Type must be maintenance_window.")
    return data


def _time(value: Any, name: str) -> float:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name.replace('_', ' ').capitalize()} must be an ISO 8601 date-time.")
    return parse_time(value, name)


def _services(call: Call, value: Any) -> list[Service]:
    if not isinstance(value, list) or not value:
        raise InvalidInput("Services must be a non-empty list of service references.")
    services: list[Service] = []
    for item in value:
        service = call.state.services.get(object_id(item, "Service"))
        if service is None:
            raise InvalidInput("Service not found.")
        if service not in services:
            services.append(service)
    return services


def _check(start: float, end: float, now: float) -> float:
    """The window's start (a start in the past becomes now, as PagerDuty does)."""
    if end <= now:
        raise InvalidInput("End time must be in the future.")
    if end <= start:
        raise InvalidInput("End time must be after the start time.")
    return max(start, now)


@route("POST", "/maintenance_windows")
def create_maintenance_window(call: Call) -> tuple[int, dict[str, Any]]:
    by = call.requester()
    data = _wrapped(call)
    start, end = _time(data.get("start_time"), "start_time"), _time(data.get("end_time"), "end_time")
    services = _services(call, data.get("services"))
    description = data.get("description", "")
    if not isinstance(description, str):
        raise InvalidInput("Description must be a string.")
    start = _check(start, end, call.desk.now())
    state = call.state
    window = MaintenanceWindow(
        call.desk.new_id(), len(state.maintenance_windows) + 1, start, end, services, description, by
    )
    state.maintenance_windows[window.id] = window
    return 201, {"maintenance_window": window.to_dict(call.base)}


@route("GET", "/maintenance_windows/{id}", partial="include[] is ignored")
def get_maintenance_window(call: Call) -> dict[str, Any]:
    return {"maintenance_window": _window(call).to_dict(call.base)}


@route("PUT", "/maintenance_windows/{id}")
def update_maintenance_window(call: Call) -> dict[str, Any]:
    window = _window(call)
    data = _wrapped(call)
    now = call.desk.now()
    if window.end <= now:
        raise InvalidInput("Maintenance windows that have already ended cannot be updated.")
    start = _time(data["start_time"], "start_time") if data.get("start_time") is not None else window.start
    end = _time(data["end_time"], "end_time") if data.get("end_time") is not None else window.end
    services = _services(call, data["services"]) if data.get("services") is not None else window.services
    description = data.get("description", window.description)
    if not isinstance(description, str):
        raise InvalidInput("Description must be a string.")
    start = (
        window.start if window.start <= now else _check(start, end, now)
    )  # an ongoing window keeps its start
    if end <= start:
        raise InvalidInput("End time must be after the start time.")
    window.start, window.end, window.services, window.description = start, end, services, description
    return {"maintenance_window": window.to_dict(call.base)}


@route("DELETE", "/maintenance_windows/{id}")
def delete_maintenance_window(call: Call) -> tuple[int, None]:
    """A future window is deleted; an ongoing one ends now; an ended one cannot be (405)."""
    window = _window(call)
    now = call.desk.now()
    if window.end <= now:
        raise AlreadyEnded()
    if window.start > now:
        del call.state.maintenance_windows[window.id]
    else:
        window.end = now
    return 204, None
