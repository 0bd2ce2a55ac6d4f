"""Incidents: list, get, create, update (one or many), notes, log entries, alerts, merge, snooze."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.pagerduty.call import Call, paginated
from ancha.world.tools.pagerduty.errors import InvalidInput, NotFound
from ancha.world.tools.pagerduty.models import SORT_KEYS, EscalationPolicy, Incident, User
from ancha.world.tools.pagerduty.params import object_id
from ancha.world.tools.pagerduty.router import route
from ancha.world.tools.pagerduty.routes.teams import in_teams

STATUSES = ("triggered", "acknowledged", "resolved")
URGENCIES = ("high", "low")
DEFAULT_WINDOW_S = 30 * 86400
SORTABLE = ("incident_number", "created_at", "resolved_at", "urgency")


def _sort(value: str | None) -> tuple[str, bool]:
    if not value:
        return "created_at", False
    field, _, direction = value.partition(":")
    if field not in SORTABLE or direction not in ("", "asc", "desc"):
        raise InvalidInput("Sort by must be one of incident_number, created_at, resolved_at or urgency, "
                           "optionally followed by :asc or :desc.")
    return field, direction == "desc"


@route("GET", "/incidents", partial="include[] and time_zone are ignored; team_ids[] goes by the teams of each "
                                   "incident's service's escalation policy")
def list_incidents(call: Call) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    statuses = frozenset(q.many("statuses"))
    if not statuses <= set(STATUSES):
        raise InvalidInput("Statuses must be a list of triggered, acknowledged, or resolved.")
    urgencies = frozenset(q.many("urgencies"))
    if not urgencies <= set(URGENCIES):
        raise InvalidInput("Urgencies must be a list of high or low.")
    services = frozenset(q.many("service_ids"))
    teams = in_teams(call)
    if teams is not None:
        owned = {s.id for s in call.state.services.values() if any(t in teams for t in s.policy.teams)}
        services = frozenset((owned & services) if services else owned) or frozenset({""})  # ("": none)
    users = frozenset(q.many("user_ids"))
    field, descending = _sort(q.get("sort_by"))
    since, until = q.time("since"), q.time("until")
    if q.get("date_range") == "all":
        since = until = None
    elif since is None and until is None:
        until = None  # nothing is created after now
        since = call.desk.now() - DEFAULT_WINDOW_S
    elif since is not None and until is not None and until < since:
        raise InvalidInput("Invalid 'since' or 'until' Parameter Values")
    incidents, keys = call.state.filtered((statuses, services, users, urgencies, q.get("incident_key")))
    low, high = call.state.window(keys, since, until)
    count = high - low
    if field == "created_at":
        if descending:
            start, stop = max(low, high - offset - limit), max(low, high - offset)
            page = incidents[start:stop][::-1]
        else:
            page = incidents[low + offset: min(high, low + offset + limit)]
    else:
        ordered = sorted(incidents[low:high], key=SORT_KEYS[field], reverse=descending)
        page = ordered[offset: offset + limit]
    base = call.base
    return paginated("incidents", [i.to_dict(base) for i in page], limit, offset,
                     count if q.flag("total") else None, offset + limit < count)


@route("GET", "/incidents/{id}", partial="include[] is ignored")
def get_incident(call: Call) -> dict[str, Any]:
    return {"incident": call.incident().to_dict(call.base)}


def _user(call: Call, value: Any, what: str) -> User:
    user = call.state.users.get(object_id(value, what))
    if user is None:
        raise InvalidInput(f"{what} not found.")
    return user


def _policy(call: Call, value: Any) -> EscalationPolicy:
    policy = call.state.policies.get(object_id(value, "Escalation policy"))
    if policy is None:
        raise InvalidInput("Escalation policy not found.")
    return policy


def _assignees(call: Call, value: Any) -> list[User]:
    if not isinstance(value, list) or not value:
        raise InvalidInput("Assignments must be a non-empty list.")
    users = []
    for item in value:
        if not isinstance(item, dict):
            raise InvalidInput("Assignments must be a list of objects with an assignee.")
        user = _user(call, item.get("assignee"), "Assignee")
        if user not in users:
            users.append(user)
    return users


def _wrapped(body: dict[str, Any], name: str) -> dict[str, Any]:
    inner = body.get(name)
    if not isinstance(inner, dict):
        raise InvalidInput(f"{name.capitalize()} must be an object.")
    kind = inner.get("type")
    if kind is not None and kind not in (name, f"{name}_reference"):
        raise InvalidInput(f"Type must be {name} or {name}_reference.")
    return inner


@route("POST", "/incidents", partial="conference_bridge and incident_type are ignored")
def create_incident(call: Call) -> tuple[int, dict[str, Any]]:
    requester = call.requester()
    data = _wrapped(call.body(), "incident")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise InvalidInput("Title cannot be empty.")
    service = call.state.services.get(object_id(data.get("service"), "Service"))
    if service is None:
        raise InvalidInput("Service not found.")
    urgency = data.get("urgency", "high")
    if urgency not in URGENCIES:
        raise InvalidInput("Urgency must be high or low.")
    key = data.get("incident_key")
    if key is not None and not isinstance(key, str):
        raise InvalidInput("Incident key must be a string.")
    if key and (service.id, key) in call.state.open_by_key:
        raise InvalidInput("Open incident with matching dedup key already exists on this service")
    policy = _policy(call, data["escalation_policy"]) if data.get("escalation_policy") is not None else None
    assignees = _assignees(call, data["assignments"]) if data.get("assignments") is not None else None
    if policy is not None and assignees is not None:
        raise InvalidInput("Only one of escalation_policy or assignments may be given.")
    priority = _priority(call, data["priority"]) if data.get("priority") is not None else None
    details = data.get("body", {}).get("details") if isinstance(data.get("body"), dict) else None
    incident = call.desk.trigger(service, title.strip(), by=requester, actor=call.actor, urgency=urgency,
                                 incident_key=key or None, details=details, policy=policy, assignees=assignees,
                                 priority=priority)
    return 201, {"incident": incident.to_dict(call.base)}


def _priority(call: Call, value: Any) -> Any:
    priority = call.state.priorities.get(object_id(value, "Priority"))
    if priority is None:
        raise InvalidInput("Priority not found.")
    return priority


def _apply(call: Call, incident: Incident, data: dict[str, Any], by: User | None) -> None:
    """One incident's update (PUT): validate everything first, then change it."""
    status = data.get("status")
    if status is not None and status not in ("acknowledged", "resolved"):
        raise InvalidInput("Status must be acknowledged or resolved.")
    if incident.status == "resolved" and any(data.get(k) is not None for k in
                                             ("status", "assignments", "escalation_level", "escalation_policy")):
        raise InvalidInput("Incident Already Resolved")
    level = data.get("escalation_level")
    if level is not None and (not isinstance(level, int) or isinstance(level, bool) or not
                              1 <= level <= max(1, len(incident.policy.rules))):
        raise InvalidInput("Escalation level is not valid for this escalation policy.")
    assignees = _assignees(call, data["assignments"]) if data.get("assignments") is not None else None
    policy = _policy(call, data["escalation_policy"]) if data.get("escalation_policy") is not None else None
    urgency = data.get("urgency")
    if urgency is not None and urgency not in URGENCIES:
        raise InvalidInput("Urgency must be high or low.")
    title = data.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip()):
        raise InvalidInput("Title cannot be empty.")
    priority = _priority(call, data["priority"]) if data.get("priority") is not None else None
    desk, actor = call.desk, call.actor
    changes: dict[str, Any] = {}
    if title is not None and title.strip() != incident.title:
        changes["title"] = title.strip()
    if urgency is not None and urgency != incident.urgency:
        changes["urgency"] = urgency
    if priority is not None and priority is not incident.priority:
        changes["priority"] = priority
    if changes:
        desk.update(incident, by, actor, **changes)
    if policy is not None:
        desk.reassign_policy(incident, policy, by, actor)
    if assignees is not None:
        desk.reassign(incident, assignees, by, actor)
    if level is not None:
        desk.escalate(incident, level, by, actor)
    if status == "acknowledged" and incident.status != "resolved":
        desk.acknowledge(incident, by, actor)
    elif status == "resolved":
        resolution = data.get("resolution")
        if isinstance(resolution, str) and resolution.strip():
            desk.annotate(incident, resolution.strip(), by, actor)
        desk.resolve(incident, by, actor)


@route("PUT", "/incidents/{id}", partial="conference_bridge and incident_type are ignored")
def update_incident(call: Call) -> dict[str, Any]:
    by = call.requester()
    incident = call.incident()
    _apply(call, incident, _wrapped(call.body(), "incident"), by)
    return {"incident": incident.to_dict(call.base)}


@route("PUT", "/incidents", partial="conference_bridge and incident_type are ignored")
def update_incidents(call: Call) -> dict[str, Any]:
    by = call.requester()
    items = call.body().get("incidents")
    if not isinstance(items, list) or not items:
        raise InvalidInput("Incidents must be a non-empty list.")
    if len(items) > 250:
        raise InvalidInput("You may update at most 250 incidents at once.")
    found: list[tuple[Incident, dict[str, Any]]] = []
    for item in items:
        if not isinstance(item, dict):
            raise InvalidInput("Incidents must be a list of objects.")
        found.append((call.incident(object_id(item, "Incident")), item))
    for incident, item in found:
        _apply(call, incident, item, by)
    return {"incidents": [incident.to_dict(call.base) for incident, _ in found]}


@route("GET", "/incidents/{id}/notes")
def list_notes(call: Call) -> dict[str, Any]:
    return {"notes": [note.to_dict(call.base) for note in call.incident().notes]}


@route("POST", "/incidents/{id}/notes")
def create_note(call: Call) -> tuple[int, dict[str, Any]]:
    """200, as PagerDuty's OpenAPI description documents it."""
    by = call.requester()
    incident = call.incident()
    note = call.body().get("note")
    content = note.get("content") if isinstance(note, dict) else None
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("Content cannot be empty.")
    if len(content) > 25000:
        raise InvalidInput("Content is too long (maximum is 25000 characters).")
    created = call.desk.annotate(incident, content, by, call.actor)
    return 200, {"note": created.to_dict(call.base)}


def _log_page(call: Call, entries: list[Any]) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    since, until = q.time("since"), q.time("until")
    if since is not None or until is not None:
        entries = [e for e in entries if (since is None or e.created_at >= since)
                   and (until is None or e.created_at < until)]
    ordered = entries[::-1]  # newest first, as PagerDuty lists them
    page = ordered[offset: offset + limit]
    return paginated("log_entries", [e.to_dict(call.base) for e in page], limit, offset,
                     len(ordered) if q.flag("total") else None, offset + limit < len(ordered))


@route("GET", "/incidents/{id}/log_entries", partial="include[] and time_zone are ignored")
def list_incident_log_entries(call: Call) -> dict[str, Any]:
    return _log_page(call, call.incident().log_entries)


@route("GET", "/log_entries", partial="include[], team_ids[] and time_zone are ignored")
def list_log_entries(call: Call) -> dict[str, Any]:
    return _log_page(call, call.state.log_order)


@route("GET", "/log_entries/{id}", partial="include[] is ignored")
def get_log_entry(call: Call) -> dict[str, Any]:
    entry = call.state.log_entries.get(call.params["id"])
    if entry is None:
        raise NotFound()
    return {"log_entry": entry.to_dict(call.base)}


@route("GET", "/incidents/{id}/alerts", partial="alert_key, statuses[] and sort_by are ignored")
def list_alerts(call: Call) -> dict[str, Any]:
    limit, offset = call.query.page()
    alerts = call.incident().alerts
    page = alerts[offset: offset + limit]
    return paginated("alerts", [a.to_dict(call.base) for a in page], limit, offset,
                     len(alerts) if call.query.flag("total") else None, offset + limit < len(alerts))


@route("GET", "/incidents/{id}/alerts/{alert_id}")
def get_alert(call: Call) -> dict[str, Any]:
    for alert in call.incident().alerts:
        if alert.id == call.params["alert_id"]:
            return {"alert": alert.to_dict(call.base)}
    raise NotFound()


@route("PUT", "/incidents/{id}/merge")
def merge_incidents(call: Call) -> dict[str, Any]:
    by = call.requester()
    target = call.incident()
    sources = call.body().get("source_incidents")
    if not isinstance(sources, list) or not sources:
        raise InvalidInput("Source incidents must be a non-empty list.")
    found = [call.incident(object_id(s, "Source incident")) for s in sources]
    if any(s is target for s in found):
        raise InvalidInput("An incident cannot be merged into itself.")
    if target.status == "resolved":
        raise InvalidInput("Incident Already Resolved")
    call.desk.merge(target, found, by, call.actor)
    return {"incident": target.to_dict(call.base)}


@route("POST", "/incidents/{id}/snooze")
def snooze_incident(call: Call) -> tuple[int, dict[str, Any]]:
    by = call.requester()
    incident = call.incident()
    duration = call.body().get("duration")
    if not isinstance(duration, int) or isinstance(duration, bool) or duration <= 0:
        raise InvalidInput("Duration must be a positive number of seconds.")
    if incident.status == "resolved":
        raise InvalidInput("Incident Already Resolved")
    call.desk.snooze(incident, float(duration), by, call.actor)
    return 201, {"incident": incident.to_dict(call.base)}
