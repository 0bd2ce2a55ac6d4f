"""Schedule overrides: someone on call in a schedule's place for a while, above every layer.
``/oncalls``, ``/schedules/{id}`` (its final schedule) and paging all honour them."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.pagerduty.call import Call
from ancha.world.tools.pagerduty.errors import InvalidInput, NotFound
from ancha.world.tools.pagerduty.models import Override, Schedule
from ancha.world.tools.pagerduty.params import object_id, parse_time
from ancha.world.tools.pagerduty.router import route


def _schedule(call: Call) -> Schedule:
    found = call.state.schedules.get(call.params["id"])
    if found is None:
        raise NotFound()
    return found


@route("GET", "/schedules/{id}/overrides", partial="editable and overflow are ignored")
def list_schedule_overrides(call: Call) -> dict[str, Any]:
    schedule = _schedule(call)
    since, until = call.query.time("since"), call.query.time("until")
    if since is None or until is None:
        raise InvalidInput("Since and until are required.")
    if until < since:
        raise InvalidInput("Invalid 'since' or 'until' Parameter Values")
    found = [o for o in schedule.overrides if o.start < until and o.end > since]
    return {"overrides": [o.to_dict(call.base) for o in found]}


def _time(value: Any, name: str) -> float:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"Override {name} must be an ISO 8601 date-time.")
    return parse_time(value, name)


@route("POST", "/schedules/{id}/overrides")
def create_schedule_overrides(call: Call) -> tuple[int, Any]:
    """PagerDuty's bulk form (``overrides``: a list, answered item by item) and its single
    form (``override``: answered ``{"override": ...}``)."""
    schedule = _schedule(call)
    body = call.body()
    single = "overrides" not in body and isinstance(body.get("override"), dict)
    items = [body["override"]] if single else body.get("overrides")
    if not isinstance(items, list) or not items:
        raise InvalidInput("Overrides must be a non-empty list.")
    if len(items) > 100:
        raise InvalidInput("You may create at most 100 overrides at once.")
    answers: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            raise InvalidInput("Overrides must be a list of objects.")
        start, end = _time(item.get("start"), "start"), _time(item.get("end"), "end")
        user = call.state.users.get(object_id(item.get("user"), "User"))
        if user is None:
            raise InvalidInput("User not found.")
        if end <= start:
            answers.append(
                {
                    "status": 400,
                    "errors": ["Override must end after its start"],
                    "override": {
                        "start": item["start"],
                        "end": item["end"],
                        "user": user.reference(call.base),
                    },
                }
            )
            continue
        override = Override(call.desk.new_id("Q", 14), user, start, end)
        schedule.overrides.append(override)
        answers.append({"status": 201, "override": override.to_dict(call.base)})
    if single:
        if answers[0]["status"] != 201:
            raise InvalidInput(*answers[0]["errors"])
        return 201, {"override": answers[0]["override"]}
    return 201, answers


@route("DELETE", "/schedules/{id}/overrides/{override_id}")
def delete_schedule_override(call: Call) -> tuple[int, Any]:
    """An override not yet begun is deleted (204); one under way ends now (200, truncated);
    one already over cannot be removed (PagerDuty's 400)."""
    schedule = _schedule(call)
    override = next((o for o in schedule.overrides if o.id == call.params["override_id"]), None)
    if override is None:
        raise NotFound()
    now = call.desk.now()
    if override.end <= now:
        raise InvalidInput("Overrides in the past cannot be deleted.")
    if override.start >= now:
        schedule.overrides.remove(override)
        return 204, None
    override.end = now
    return 200, {"override": override.to_dict(call.base)}
