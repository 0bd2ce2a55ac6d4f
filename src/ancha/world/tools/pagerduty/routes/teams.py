"""Teams: CRUD, members (``PUT/DELETE /teams/{id}/users/{user_id}``) and the escalation
policies a team owns (``PUT/DELETE /teams/{id}/escalation_policies/{id}``); a policy's
services and incidents belong to its teams, which is what ``team_ids[]`` filters by."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.pagerduty.call import Call, paginated
from ancha.world.tools.pagerduty.errors import InvalidInput, NotFound
from ancha.world.tools.pagerduty.models import EscalationPolicy, Team, User
from ancha.world.tools.pagerduty.params import object_id
from ancha.world.tools.pagerduty.router import route

ROLES = ("observer", "responder", "manager")


def team(call: Call, id: str | None = None) -> Team:
    found = call.state.teams.get(call.params["id"] if id is None else id)
    if found is None:
        raise NotFound()
    return found


def _fields(call: Call, data: dict[str, Any], current: Team | None) -> dict[str, Any]:
    """The team's validated fields from a create or update body (``team`` wrapper)."""
    kind = data.get("type")
    if kind is not None and kind != "team":
        raise InvalidInput("Type must be team.")
    out: dict[str, Any] = {}
    name = data.get("name")
    if name is not None or current is None:
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput("Name cannot be empty.")
        if len(name) > 100:
            raise InvalidInput("Name is too long (maximum is 100 characters).")
        clash = next(
            (
                t
                for t in call.state.teams.values()
                if t is not current and t.name.lower() == name.strip().lower()
            ),
            None,
        )
        if clash is not None:
            raise InvalidInput("Name has already been taken.")
        out["name"] = name.strip()
    description = data.get("description")
    if description is not None:
        if not isinstance(description, str) or len(description) > 1024:
            raise InvalidInput("Description must be a string of at most 1024 characters.")
        out["description"] = description
    role = data.get("default_role")
    if role is not None:
        if role not in ("manager", "none"):
            raise InvalidInput("Default role must be manager or none.")
        out["default_role"] = role
    if "parent" in data:
        parent = None if data["parent"] is None else call.state.teams.get(object_id(data["parent"], "Parent"))
        if data["parent"] is not None and parent is None:
            raise InvalidInput("Parent team not found.")
        if parent is not None and current is not None and parent is current:
            raise InvalidInput("A team cannot be its own parent.")
        out["parent"] = parent
    return out


def _wrapped(call: Call) -> dict[str, Any]:
    data = call.body().get("team")
    if not isinstance(data, dict):
        raise InvalidInput("Team must be an object.")
    return data


def in_teams(call: Call) -> list[Team] | None:
    """The teams ``team_ids[]`` names (unknown ids match nothing), or None when not given."""
    ids = call.query.many("team_ids")
    if not ids:
        return None
    return [t for t in (call.state.teams.get(i) for i in ids) if t is not None]


@route("GET", "/teams")
def list_teams(call: Call) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page()
    teams = sorted(call.state.teams.values(), key=lambda t: t.name.lower())
    needle = (q.get("query") or "").lower()
    if needle:
        teams = [t for t in teams if needle in t.name.lower()]
    page = teams[offset : offset + limit]
    return paginated(
        "teams",
        [t.to_dict(call.base) for t in page],
        limit,
        offset,
        len(teams) if q.flag("total") else None,
        offset + limit < len(teams),
    )


@route("POST", "/teams")
def create_team(call: Call) -> tuple[int, dict[str, Any]]:
    fields = _fields(call, _wrapped(call), None)
    created = Team(call.desk.new_id(), **fields)
    call.state.teams[created.id] = created
    return 201, {"team": created.to_dict(call.base)}


@route("GET", "/teams/{id}", partial="include[] is ignored")
def get_team(call: Call) -> dict[str, Any]:
    return {"team": team(call).to_dict(call.base)}


@route("PUT", "/teams/{id}")
def update_team(call: Call) -> dict[str, Any]:
    found = team(call)
    for name, value in _fields(call, _wrapped(call), found).items():
        setattr(found, name, value)
    return {"team": found.to_dict(call.base)}


@route("DELETE", "/teams/{id}", partial="reassignment_team is ignored: the team's incidents keep no team")
def delete_team(call: Call) -> tuple[int, None]:
    found = team(call)
    for user, _ in found.members:
        user.teams.remove(found)
    for policy in call.state.policies.values():
        if found in policy.teams:
            policy.teams.remove(found)
    for other in call.state.teams.values():
        if other.parent is found:
            other.parent = None
    del call.state.teams[found.id]
    call.state.changed()
    return 204, None


@route("GET", "/teams/{id}/members", partial="include[] is ignored")
def list_team_members(call: Call) -> dict[str, Any]:
    q = call.query
    limit, offset = q.page(100)
    members = team(call).members
    page = members[offset : offset + limit]
    return paginated(
        "members",
        [{"user": u.reference(call.base), "role": role} for u, role in page],
        limit,
        offset,
        len(members) if q.flag("total") else None,
        offset + limit < len(members),
    )


def _user(call: Call) -> User:
    user = call.state.users.get(call.params["user_id"])
    if user is None:
        raise NotFound()
    return user


@route("PUT", "/teams/{id}/users/{user_id}")
def add_team_user(call: Call) -> tuple[int, None]:
    found, user = team(call), _user(call)
    role = call.body().get("role", "manager") if call.raw.strip() else "manager"
    if role not in ROLES:
        raise InvalidInput("Role must be one of observer, responder or manager.")
    for n, (member, _) in enumerate(found.members):
        if member is user:
            found.members[n] = (user, role)
            return 204, None
    found.members.append((user, role))
    user.teams.append(found)
    return 204, None


@route("DELETE", "/teams/{id}/users/{user_id}")
def remove_team_user(call: Call) -> tuple[int, None]:
    found, user = team(call), _user(call)
    found.members = [(u, r) for u, r in found.members if u is not user]
    if found in user.teams:
        user.teams.remove(found)
    return 204, None


def _policy(call: Call) -> EscalationPolicy:
    policy = call.state.policies.get(call.params["escalation_policy_id"])
    if policy is None:
        raise NotFound()
    return policy


@route("PUT", "/teams/{id}/escalation_policies/{escalation_policy_id}")
def add_team_escalation_policy(call: Call) -> tuple[int, None]:
    found, policy = team(call), _policy(call)
    if found not in policy.teams:
        policy.teams.append(found)
        call.state.changed()
    return 204, None


@route("DELETE", "/teams/{id}/escalation_policies/{escalation_policy_id}")
def remove_team_escalation_policy(call: Call) -> tuple[int, None]:
    found, policy = team(call), _policy(call)
    if found in policy.teams:
        policy.teams.remove(found)
        call.state.changed()
    return 204, None
