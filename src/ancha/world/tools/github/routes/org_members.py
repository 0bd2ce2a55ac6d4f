"""Org membership and team writes: invite, change roles, remove; team members and repos.

Adding someone to an org is an invitation (``state: pending``) until they accept it
(``PATCH /user/memberships/orgs/{org}``); it grants nothing before. Role changes of
members, team memberships and team repositories change effective permissions at once:
``GitHubState.role`` reads ``Org.members`` and each ``Team``'s members and repos.
Only org owners (``admin``) manage memberships; team maintainers may manage their team.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.models import Org, Team, User
from ancha.world.tools.github.models.social import Invitation, invitations_of
from ancha.world.tools.github.router import route

_REPO_ROLES = {"pull": "read", "triage": "triage", "push": "write", "maintain": "maintain", "admin": "admin"}
REPOSITORY_JSON = "application/vnd.github.v3.repository+json"


def _org(call: Call) -> Org:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None:
        raise errors.NotFound()
    return org


def _owner_of(call: Call, org: Org) -> None:
    """403 unless the caller owns ``org`` (404 when they are not even a member)."""
    role = org.members.get(call.user.key)
    if role is None:
        raise errors.NotFound()
    if role != "admin":
        raise errors.Forbidden("You must be an admin of the organization to perform this action.")


def _user(call: Call) -> User:
    user = call.state.user(call.params["username"])
    if user is None:
        raise errors.NotFound()
    return user


def _membership(call: Call, org: Org, user: User) -> dict[str, Any]:
    """``org-membership``: active, or pending while an invitation waits."""
    pending = invitations_of(call.state).get(org.key, {}).get(user.key)
    if user.key in org.members:
        state, role = "active", org.members[user.key]
    elif pending is not None:
        state, role = "pending", pending.role
    else:
        raise errors.NotFound()
    body: dict[str, Any] = {"url": f"{call.base}/orgs/{org.login}/memberships/{user.login}", "state": state,
                            "role": role, "organization_url": f"{call.base}/orgs/{org.login}",
                            "organization": org.simple_org(call.base), "user": user.simple(call.base)}
    if state == "active" and call.caller is not None and call.caller.user.key == user.key:
        body["permissions"] = {"can_create_repository": True}
    return body


def _invite(call: Call, org: Org, user: User, role: str) -> Invitation:
    pending = invitations_of(call.state).setdefault(org.key, {})
    invitation = pending.get(user.key)
    if invitation is None:
        invitation = pending[user.key] = Invitation(role)
    invitation.role = role
    return invitation


@route("PUT", "/orgs/{org}/memberships/{username}")
def orgs_set_membership_for_user(call: Call) -> dict[str, Any]:
    org = _org(call)
    _owner_of(call, org)
    user = _user(call)
    role = call.field_str("role", allow_none=False) or "member"
    if role not in ("admin", "member"):
        raise errors.invalid_request(f"For 'role', \"{role}\" is not one of admin, member.")
    if user.key in org.members:
        org.members[user.key] = role
    else:
        _invite(call, org, user, role)
    return _membership(call, org, user)


def _remove_member(org: Org, key: str) -> None:
    org.members.pop(key, None)
    for team in org.teams.values():
        team.members.pop(key, None)


@route("DELETE", "/orgs/{org}/memberships/{username}")
def orgs_remove_membership_for_user(call: Call) -> Reply:
    org = _org(call)
    _owner_of(call, org)
    user = _user(call)
    pending = invitations_of(call.state).get(org.key, {})
    if user.key not in org.members and user.key not in pending:
        raise errors.NotFound()
    pending.pop(user.key, None)
    _remove_member(org, user.key)
    return no_content()


@route("DELETE", "/orgs/{org}/members/{username}")
def orgs_remove_member(call: Call) -> Reply:
    org = _org(call)
    _owner_of(call, org)
    user = _user(call)
    _remove_member(org, user.key)
    return no_content()


# --- the caller's own memberships ------------------------------------------------------------


@route("GET", "/user/memberships/orgs")
def orgs_list_memberships_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    user = call.user
    state = call.q_enum("state", ("active", "pending"), "") if call.query.get("state") else None
    pending = invitations_of(call.state)
    orgs = [o for o in call.state.orgs.values() if user.key in o.members or user.key in pending.get(o.key, {})]
    items = [_membership(call, o, user) for o in sorted(orgs, key=lambda o: o.login.lower())]
    return list(call.page([m for m in items if state is None or m["state"] == state]))


@route("GET", "/user/memberships/orgs/{org}")
def orgs_get_membership_for_authenticated_user(call: Call) -> dict[str, Any]:
    user = call.user
    return _membership(call, _org(call), user)


@route("PATCH", "/user/memberships/orgs/{org}")
def orgs_update_membership_for_authenticated_user(call: Call) -> dict[str, Any]:
    user = call.user
    org = _org(call)
    state = call.field_str("state", resource="Membership", required=True)
    if state != "active":
        raise errors.invalid_request(f"For 'state', \"{state}\" is not one of active.")
    invitation = invitations_of(call.state).get(org.key, {}).pop(user.key, None)
    if invitation is None and user.key not in org.members:
        raise errors.NotFound()
    if invitation is not None:
        org.members[user.key] = invitation.role
        for slug, role in invitation.teams.items():
            if slug in org.teams:
                org.teams[slug].members[user.key] = role
    return _membership(call, org, user)


# --- teams ---------------------------------------------------------------------------------------


def _team(call: Call, manage: bool = False) -> tuple[Org, Team]:
    org = _org(call)
    caller = call.user
    if caller.key not in org.members:
        raise errors.NotFound()
    team = org.teams.get(call.params["team_slug"].lower())
    if team is None:
        raise errors.NotFound()
    if manage and org.members[caller.key] != "admin" and team.members.get(caller.key) != "maintainer":
        raise errors.Forbidden("You must be an organization owner or team maintainer to perform this action.")
    return org, team


def _team_membership(call: Call, org: Org, team: Team, user: User) -> dict[str, Any]:
    url = f"{call.base}/orgs/{org.login}/teams/{team.slug}/memberships/{user.login}"
    if user.key in team.members:
        return {"url": url, "role": team.members[user.key], "state": "active"}
    invitation = invitations_of(call.state).get(org.key, {}).get(user.key)
    if invitation is not None and team.slug in invitation.teams:
        return {"url": url, "role": invitation.teams[team.slug], "state": "pending"}
    raise errors.NotFound()


@route("GET", "/orgs/{org}/teams/{team_slug}/memberships/{username}")
def teams_get_membership_for_user_in_org(call: Call) -> dict[str, Any]:
    org, team = _team(call)
    return _team_membership(call, org, team, _user(call))


@route("PUT", "/orgs/{org}/teams/{team_slug}/memberships/{username}")
def teams_add_or_update_membership_for_user_in_org(call: Call) -> dict[str, Any]:
    org, team = _team(call, manage=True)
    user = _user(call)
    role = call.field_str("role", allow_none=False) or "member"
    if role not in ("member", "maintainer"):
        raise errors.invalid_request(f"For 'role', \"{role}\" is not one of member, maintainer.")
    if user.key in org.members:
        team.members[user.key] = role
    else:  # GitHub invites them to the org; the team follows when they accept
        invitation = invitations_of(call.state).get(org.key, {}).get(user.key) or _invite(call, org, user, "member")
        invitation.teams[team.slug] = role
    return _team_membership(call, org, team, user)


@route("DELETE", "/orgs/{org}/teams/{team_slug}/memberships/{username}")
def teams_remove_membership_for_user_in_org(call: Call) -> Reply:
    org, team = _team(call, manage=True)
    user = _user(call)
    invitation = invitations_of(call.state).get(org.key, {}).get(user.key)
    if user.key not in team.members and (invitation is None or team.slug not in invitation.teams):
        raise errors.NotFound()
    team.members.pop(user.key, None)
    if invitation is not None:
        invitation.teams.pop(team.slug, None)
    return no_content()


@route("GET", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}")
def teams_check_permissions_for_repo_in_org(call: Call) -> Reply:
    _, team = _team(call)
    repo = call.repo()
    if repo.key not in team.repos:
        raise errors.NotFound()
    if REPOSITORY_JSON not in call.request_headers.get("accept", ""):
        return no_content()
    body = repo.to_dict(call.base, role=team.repos[repo.key])
    return Reply(200, {**body, "role_name": team.repos[repo.key]})


@route("PUT", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}")
def teams_add_or_update_repo_permissions_in_org(call: Call) -> Reply:
    org, team = _team(call)
    _owner_of(call, org)
    repo = call.repo()
    if repo.owner.key != org.key:
        raise errors.Unprocessable("Validation Failed: the repository must belong to the team's organization.")
    permission = call.field_str("permission", allow_none=False) or "push"
    role = _REPO_ROLES.get(permission)
    if role is None:
        raise errors.invalid_request(f"For 'permission', \"{permission}\" is not one of "
                                     f"{', '.join(_REPO_ROLES)}.")
    team.repos[repo.key] = role
    return no_content()


@route("DELETE", "/orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}")
def teams_remove_repo_in_org(call: Call) -> Reply:
    org, team = _team(call)
    _owner_of(call, org)
    repo = call.repo()
    team.repos.pop(repo.key, None)
    return no_content()


def _team_by_id(call: Call) -> tuple[Org, Team]:
    """``/teams/{team_id}`` (GitHub's legacy team paths): the team with that id, for its org's members."""
    wanted = call.number("team_id")
    for org in call.state.orgs.values():
        for team in org.teams.values():
            if team.id == wanted and call.user.key in org.members:
                call.params.update({"org": org.login, "team_slug": team.slug})
                return org, team
    raise errors.NotFound()


@route("PUT", "/teams/{team_id}/repos/{owner}/{repo}")
def teams_add_or_update_repo_permissions_legacy(call: Call) -> Reply:
    _team_by_id(call)
    return teams_add_or_update_repo_permissions_in_org(call)


@route("GET", "/teams/{team_id}/repos/{owner}/{repo}")
def teams_check_permissions_for_repo_legacy(call: Call) -> Reply:
    _team_by_id(call)
    return teams_check_permissions_for_repo_in_org(call)


@route("DELETE", "/teams/{team_id}/repos/{owner}/{repo}")
def teams_remove_repo_legacy(call: Call) -> Reply:
    _team_by_id(call)
    return teams_remove_repo_in_org(call)
