"""SLO corrections (v1): create, list, get, update, delete, and an SLO's own list. A
correction belongs to its SLO and goes with it when the SLO is deleted."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from ancha.world.tools.datadog.call import Call, Reply
from ancha.world.tools.datadog.downtimes import CREATOR_USER_ID, creator_user
from ancha.world.tools.datadog.errors import ApiError, bad_request, not_found
from ancha.world.tools.datadog.router import route
from ancha.world.tools.datadog.slos import CORRECTION_CATEGORIES, Correction, Slo

_FIELDS = ("slo_id", "start", "end", "description", "category", "timezone", "rrule", "duration")


def _user() -> dict[str, Any]:
    attributes = creator_user()["attributes"]
    return {
        "type": "users",
        "id": CREATOR_USER_ID,
        "attributes": {
            "uuid": CREATOR_USER_ID,
            "handle": attributes["handle"],
            "email": attributes["email"],
            "name": attributes["name"],
        },
    }


def _live_slos(call: Call) -> list[Slo]:
    return [s for s in call.state.slos.values() if s.deleted is None]


def _all(call: Call) -> list[Correction]:
    return [c for s in _live_slos(call) for c in s.corrections if c.deleted is None]


def _missing(correction_id: str) -> ApiError:
    return not_found(f"SLO correction not found: {correction_id} not found")


def _find(call: Call) -> tuple[Slo, Correction]:
    wanted = call.params["slo_correction_id"]
    for slo in _live_slos(call):
        for correction in slo.corrections:
            if correction.id == wanted and correction.deleted is None:
                return slo, correction
    raise _missing(wanted)


def _attributes(call: Call) -> dict[str, Any]:
    data = call.object().get("data")
    if (
        not isinstance(data, dict)
        or data.get("type") != "correction"
        or not isinstance(data.get("attributes"), dict)
    ):
        raise bad_request('Invalid payload: data is required, with type "correction" and attributes')
    attributes: dict[str, Any] = data["attributes"]
    if attributes.get("slo_query") is not None:
        raise bad_request(
            "Invalid payload: corrections by slo_query are not supported by this replica; give the SLO's slo_id"
        )
    unknown = [k for k in attributes if k not in _FIELDS and k != "slo_query"]
    if unknown:
        raise bad_request(f"Invalid payload: unknown attribute {unknown[0]!r}")
    return attributes


def _integer(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_request(f"Invalid payload: {name} must be a POSIX timestamp in seconds")
    return value


def _apply(correction: Correction, attributes: dict[str, Any]) -> None:
    if "category" in attributes:
        if attributes["category"] not in CORRECTION_CATEGORIES:
            raise bad_request(f"Invalid payload: category must be one of {', '.join(CORRECTION_CATEGORIES)}")
        correction.category = attributes["category"]
    for key in ("description", "timezone", "rrule"):
        if key in attributes:
            if attributes[key] is not None and not isinstance(attributes[key], str):
                raise bad_request(f"Invalid payload: {key} must be a string")
            setattr(correction, key, attributes[key] if key != "timezone" else attributes[key] or "UTC")
    if "start" in attributes:
        start = _integer(attributes["start"], "start")
        if start is None:
            raise bad_request("Invalid payload: start is required")
        correction.start = start
    if "end" in attributes:
        correction.end = _integer(attributes["end"], "end")
    if "duration" in attributes:
        correction.duration = _integer(attributes["duration"], "duration")
    if correction.rrule:
        if correction.duration is None or correction.duration <= 0:
            raise bad_request("Invalid payload: a correction with an rrule needs a duration in seconds")
    elif correction.end is None:
        raise bad_request("Invalid payload: a correction needs an end (or an rrule and a duration)")
    elif correction.end <= correction.start:
        raise bad_request("Invalid payload: end must be after start")


@route(
    "POST",
    "/api/v1/slo/correction",
    partial="corrections are kept and listed, by slo_id only (slo_query answers 400); history does not apply them",
)
def create_correction(call: Call) -> Reply:
    attributes = _attributes(call)
    slo_id = attributes.get("slo_id")
    slo = call.state.slos.get(slo_id) if isinstance(slo_id, str) else None
    if slo is None or slo.deleted is not None:
        raise not_found(f"SLO not found: {slo_id} not found")
    if attributes.get("category") is None:
        raise bad_request("Invalid payload: category is required")
    state = call.state
    correction = Correction(
        id=state.new_downtime_id(), slo_id=slo.id, start=0, category="Other", created=state.stamp()
    )
    _apply(correction, {**attributes, "start": attributes.get("start")})
    slo.corrections.append(correction)
    return Reply(200, {"data": correction.to_dict(_user())})


def _page(call: Call, found: list[Correction]) -> tuple[list[Correction], int, int]:
    offset = call.q_int("offset", call.q_int("page[offset]", 0, low=0), low=0) or 0
    limit = call.q_int("limit", call.q_int("page[limit]", 25, low=1, high=1000), low=1, high=1000) or 25
    return found[offset : offset + limit], offset, limit


@route("GET", "/api/v1/slo/correction")
def list_corrections(call: Call) -> Reply:
    found = _all(call)
    page, _, _ = _page(call, found)
    return Reply(
        200,
        {
            "data": [c.to_dict(_user()) for c in page],
            "meta": {"page": {"total_count": len(found), "total_filtered_count": len(page)}},
        },
    )


@route("GET", "/api/v1/slo/correction/{slo_correction_id}")
def get_correction(call: Call) -> Reply:
    return Reply(200, {"data": _find(call)[1].to_dict(_user())})


@route("PATCH", "/api/v1/slo/correction/{slo_correction_id}")
def update_correction(call: Call) -> Reply:
    _, correction = _find(call)
    attributes = _attributes(call)
    if "slo_id" in attributes and attributes["slo_id"] != correction.slo_id:
        raise bad_request("Invalid payload: a correction cannot move to another SLO")
    _apply(correction, attributes)
    correction.modified = call.state.stamp()
    return Reply(200, {"data": correction.to_dict(_user())})


@route("DELETE", "/api/v1/slo/correction/{slo_correction_id}")
def delete_correction(call: Call) -> Reply:
    _, correction = _find(call)
    correction.deleted = call.state.stamp()
    return Reply(204, None)


@route("GET", "/api/v1/slo/{slo_id}/corrections")
def list_slo_corrections(call: Call) -> Reply:
    slo_id = call.params["slo_id"]
    slo = call.state.slos.get(slo_id)
    if slo is None or slo.deleted is not None:
        raise not_found(f"SLO not found: {slo_id} not found")
    found = [c for c in slo.corrections if c.deleted is None]
    page, offset, limit = _page(call, found)
    last = max(0, (len(found) - 1) // limit * limit)
    base = f"{call.replica.base_url}/api/v1/slo/{slo_id}/corrections"

    def link(at: int) -> str:
        return f"{base}?{urlencode({'page[offset]': at, 'page[limit]': limit})}"

    return Reply(
        200,
        {
            "data": [c.to_dict(_user()) for c in page],
            "meta": {
                "pagination": {
                    "offset": offset,
                    "first_offset": 0,
                    "prev_offset": max(0, offset - limit),
                    "next_offset": offset + limit,
                    "last_offset": last,
                    "limit": limit,
                    "type": "offset_limit",
                    "total": len(found),
                }
            },
            "links": {
                "self": base,
                "first": link(0),
                "last": link(last),
                "next": link(offset + limit) if offset + limit < len(found) else None,
                "prev": link(max(0, offset - limit)) if offset > 0 else None,
            },
        },
    )
