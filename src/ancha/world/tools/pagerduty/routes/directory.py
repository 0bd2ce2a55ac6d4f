"""Users, services, escalation policies, schedules and priorities: lists and single reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ancha.world.tools.pagerduty.call import Call, paginated
from ancha.world.tools.pagerduty.errors import InvalidInput, NotFound
from ancha.world.tools.pagerduty.models import EscalationPolicy, Schedule, User, iso
from ancha.world.tools.pagerduty.router import link, route
from ancha.world.tools.pagerduty.routes.teams import in_teams

T = TypeVar("T")


def _page(call: Call, name: str, items: list[T], wire: Callable[[T], dict[str, Any]],
          text: Callable[[T], str] | None = None) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    needle = (q.get("query") or "").lower()
    if needle and text is not None:
        items = [item for item in items if needle in text(item).lower()]
    page = items[offset: offset + limit]
    return paginated(name, [wire(item) for item in page], limit, offset, len(items) if q.flag("total") else None,
                     offset + limit < len(items))


def _get(found: dict[str, T], id: str) -> T:
    item = found.get(id)
    if item is None:
        raise NotFound()
    return item


# --- users ------------------------------------------------------------------------------


@route("GET", "/users", partial="include[] is ignored")
def list_users(call: Call) -> dict[str, Any]:
    users = list(call.state.users.values())
    teams = in_teams(call)
    if teams is not None:
        users = [u for u in users if any(t in teams for t in u.teams)]
    return _page(call, "users", users, lambda u: u.to_dict(call.base), lambda u: f"{u.name} {u.email}")


@route("GET", "/users/me")
def get_current_user(call: Call) -> dict[str, Any]:
    user = call.caller.user
    if user is None:
        raise InvalidInput("This endpoint can only be used with a user-level API key or an OAuth token.")
    return {"user": user.to_dict(call.base)}


@route("GET", "/users/{id}", partial="include[] is ignored")
def get_user(call: Call) -> dict[str, Any]:
    return {"user": _get(call.state.users, call.params["id"]).to_dict(call.base)}


# --- services ---------------------------------------------------------------------------


@route("GET", "/services", partial="include[] and sort_by are ignored")
def list_services(call: Call) -> dict[str, Any]:
    services = sorted(call.state.services.values(), key=lambda s: s.name.lower())
    teams = in_teams(call)
    if teams is not None:
        services = [s for s in services if any(t in teams for t in s.policy.teams)]
    return _page(call, "services", services, lambda s: s.to_dict(call.base), lambda s: s.name)


@route("GET", "/services/{id}", partial="include[] is ignored")
def get_service(call: Call) -> dict[str, Any]:
    return {"service": _get(call.state.services, call.params["id"]).to_dict(call.base)}


@route("GET", "/services/{id}/integrations/{integration_id}", partial="include[] is ignored")
def get_service_integration(call: Call) -> dict[str, Any]:
    service = _get(call.state.services, call.params["id"])
    if call.params["integration_id"] != service.integration_id:
        raise NotFound()
    base = call.base
    url = f"{base}/services/{service.id}/integrations/{service.integration_id}"
    return {"integration": {
        "id": service.integration_id, "type": "events_api_v2_inbound_integration", "summary": "Events API v2",
        "self": url, "html_url": url, "name": "Events API v2", "service": service.reference(base),
        "created_at": iso(service.created_at), "vendor": None, "integration_key": service.integration_key}}


# --- escalation policies ----------------------------------------------------------------


def policy_dict(policy: EscalationPolicy, base: str) -> dict[str, Any]:
    return {
        "id": policy.id, "type": "escalation_policy", "summary": policy.name, "name": policy.name,
        "self": f"{base}/escalation_policies/{policy.id}", "html_url": f"{base}/escalation_policies/{policy.id}",
        "description": policy.description, "num_loops": policy.num_loops,
        "on_call_handoff_notifications": "if_has_services",
        "escalation_rules": [{"id": rule.id, "escalation_delay_in_minutes": int(rule.delay // 60),
                              "targets": [t.reference(base) for t in rule.targets]} for rule in policy.rules],
        "services": [s.reference(base) for s in policy.services],
        "teams": [t.reference(base) for t in policy.teams], "privilege": None,
    }


@route("GET", "/escalation_policies", partial="user_ids[], include[] and sort_by are ignored")
def list_escalation_policies(call: Call) -> dict[str, Any]:
    policies = sorted(call.state.policies.values(), key=lambda p: p.name.lower())
    teams = in_teams(call)
    if teams is not None:
        policies = [p for p in policies if any(t in teams for t in p.teams)]
    return _page(call, "escalation_policies", policies, lambda p: policy_dict(p, call.base), lambda p: p.name)


@route("GET", "/escalation_policies/{id}", partial="include[] is ignored")
def get_escalation_policy(call: Call) -> dict[str, Any]:
    return {"escalation_policy": policy_dict(_get(call.state.policies, call.params["id"]), call.base)}


# --- schedules --------------------------------------------------------------------------


def schedule_dict(call: Call, schedule: Schedule, since: float | None = None,
                  until: float | None = None) -> dict[str, Any]:
    base = call.base
    users: list[User] = []
    for layer in schedule.layers:
        users.extend(u for u in layer.users if u not in users)
    policies = [p for p in call.state.policies.values()
                if any(t is schedule for rule in p.rules for t in rule.targets)]
    body: dict[str, Any] = {
        "id": schedule.id, "type": "schedule", "summary": schedule.name, "name": schedule.name,
        "self": f"{base}/schedules/{schedule.id}", "html_url": f"{base}/schedules/{schedule.id}",
        "time_zone": schedule.time_zone, "description": schedule.description,
        "schedule_layers": [{
            "id": layer.id, "name": f"Layer {n + 1}", "start": iso(layer.start), "end": None,
            "rotation_virtual_start": iso(layer.start), "rotation_turn_length_seconds": int(layer.rotation),
            "users": [{"user": u.reference(base)} for u in layer.users], "restrictions": [],
        } for n, layer in enumerate(schedule.layers)],
        "escalation_policies": [p.reference(base) for p in policies],
        "users": [u.reference(base) for u in users], "teams": [],
    }
    if since is not None and until is not None:
        entries = schedule.entries(since, until)
        covered = sum(end - start for _, start, end in entries)
        body["final_schedule"] = {
            "name": "Final Schedule", "rendered_coverage_percentage": round(100 * covered / (until - since), 2)
            if until > since else 100.0,
            "rendered_schedule_entries": [{"start": iso(start), "end": iso(end), "user": u.reference(base)}
                                          for u, start, end in entries]}
        overrides = [o for o in schedule.overrides if o.start < until and o.end > since]
        body["overrides_subschedule"] = {
            "name": "Overrides", "rendered_coverage_percentage": round(100 * sum(
                min(o.end, until) - max(o.start, since) for o in overrides) / (until - since), 2)
            if until > since else 0.0,
            "rendered_schedule_entries": [{"start": iso(max(o.start, since)), "end": iso(min(o.end, until)),
                                           "user": o.user.reference(base)} for o in overrides]}
    return body


def _range(call: Call) -> tuple[float | None, float | None]:
    since, until = call.query.time("since"), call.query.time("until")
    if (since is None) != (until is None):
        now = call.desk.now()
        since = since if since is not None else now
        until = until if until is not None else since + 14 * 86400
    if since is not None and until is not None and until < since:
        raise InvalidInput("Invalid 'since' or 'until' Parameter Values")
    return since, until


@route("GET", "/schedules", partial="include[] is ignored")
def list_schedules(call: Call) -> dict[str, Any]:
    schedules = sorted(call.state.schedules.values(), key=lambda s: s.name.lower())
    return _page(call, "schedules", schedules, lambda s: schedule_dict(call, s), lambda s: s.name)


@route("GET", "/schedules/{id}", partial="overflow and time_zone are ignored")
def get_schedule(call: Call) -> dict[str, Any]:
    schedule = _get(call.state.schedules, call.params["id"])
    since, until = _range(call)
    return {"schedule": schedule_dict(call, schedule, since, until)}


@route("GET", "/schedules/{id}/users")
def list_schedule_users(call: Call) -> dict[str, Any]:
    schedule = _get(call.state.schedules, call.params["id"])
    since, until = _range(call)
    if since is None or until is None:
        users: list[User] = []
        for layer in schedule.layers:
            users.extend(u for u in layer.users if u not in users)
    else:
        users = []
        for user, _, _ in schedule.entries(since, until):
            if user not in users:
                users.append(user)
    return {"users": [u.to_dict(call.base) for u in users]}


# --- priorities -------------------------------------------------------------------------


@route("GET", "/priorities")
def list_priorities(call: Call) -> dict[str, Any]:
    return _page(call, "priorities", list(call.state.priorities.values()), lambda p: p.to_dict(call.base))


@link("/priorities/{id}")
def get_priority(call: Call) -> dict[str, Any]:
    """Not in PagerDuty's API description, though its priority references link here: the
    replica answers the link it hands out."""
    return {"priority": _get(call.state.priorities, call.params["id"]).to_dict(call.base)}
