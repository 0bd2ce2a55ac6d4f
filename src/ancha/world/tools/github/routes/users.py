"""Users, organizations and teams: who exists, and what they belong to."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.models import Org, Repo, Team, User
from ancha.world.tools.github.router import route


def _public_repos(call: Call, owner_key: str) -> int:
    return sum(1 for r in call.state.repos.values() if r.owner.key == owner_key and not r.private)


@route("GET", "/user")
def users_get_authenticated(call: Call) -> dict[str, Any]:
    user = call.user
    owned = call.state.repos_of(user)
    return user.private(call.base, public_repos=sum(1 for r in owned if not r.private),
                        private_repos=sum(1 for r in owned if r.private))


@route("GET", "/users/{username}")
def users_get_by_username(call: Call) -> dict[str, Any]:
    account = call.state.account(call.params["username"])
    if account is None:
        raise errors.NotFound()
    if isinstance(account, Org):
        org = account.full(call.base, public_repos=_public_repos(call, account.key))
        return {**account.simple(call.base), "name": org["name"], "company": None, "blog": org["blog"],
                "location": None, "email": None, "hireable": None, "bio": org["description"],
                "twitter_username": None, **{k: org[k] for k in ("public_repos", "public_gists", "followers",
                                                                  "following", "created_at", "updated_at")}}
    assert isinstance(account, User)
    return account.public(call.base, public_repos=_public_repos(call, account.key))


def _org(call: Call) -> Org:
    org = call.state.orgs.get(call.params["org"].lower())
    if org is None:
        raise errors.NotFound()
    return org


@route("GET", "/orgs/{org}")
def orgs_get(call: Call) -> dict[str, Any]:
    org = _org(call)
    body = org.full(call.base, public_repos=_public_repos(call, org.key))
    if call.caller is not None and org.members.get(call.user.key) == "admin":
        body.update(_owner_fields(call, org))
    return body


def _owner_fields(call: Call, org: Org) -> dict[str, Any]:
    """What ``GET /orgs/{org}`` adds for the organization's owners (GitHub's ``organization-full``)."""
    repos = [repo for repo in call.state.repos.values() if repo.owner.key == org.key]
    private = sum(1 for repo in repos if repo.private)
    outside = {key for repo in repos for key in repo.collaborators if key not in org.members}
    owner = next((call.state.users[key] for key, role in org.members.items()
                  if role == "admin" and key in call.state.users), None)
    billing = owner.email if owner is not None and owner.email else f"billing@{org.login.lower()}.example"
    return {
        "total_private_repos": private, "owned_private_repos": private, "private_gists": 0, "disk_usage": 0,
        "collaborators": len(outside), "billing_email": billing,
        "default_repository_permission": org.default_permission,
        "members_can_create_repositories": True, "two_factor_requirement_enabled": False,
        "members_allowed_repository_creation_type": "all", "members_can_create_public_repositories": True,
        "members_can_create_private_repositories": True, "members_can_create_internal_repositories": False,
        "members_can_create_pages": True, "members_can_fork_private_repositories": False,
        "members_can_create_public_pages": True, "members_can_create_private_pages": True,
        "web_commit_signoff_required": False,
        "plan": {"name": "team", "space": 976562499, "private_repos": 999999, "filled_seats": len(org.members),
                 "seats": max(5, len(org.members))},
    }


@route("GET", "/user/orgs")
def orgs_list_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return [org.simple_org(call.base) for org in call.page(call.state.orgs_of(call.user))]


@route("GET", "/users/{username}/orgs")
def orgs_list_for_user(call: Call) -> list[dict[str, Any]]:
    account = call.state.account(call.params["username"])
    if account is None:
        raise errors.NotFound()
    return [org.simple_org(call.base) for org in call.page(call.state.orgs_of(account))]


@route("GET", "/orgs/{org}/members")
def orgs_list_members(call: Call) -> list[dict[str, Any]]:
    org = _org(call)
    role = call.query.get("role", "all")
    keys = [k for k, r in org.members.items() if role == "all" or (role == "admin") == (r == "admin")]
    users = sorted((call.state.users[k] for k in keys if k in call.state.users), key=lambda u: u.login.lower())
    return [u.simple(call.base) for u in call.page(users)]


@route("GET", "/orgs/{org}/members/{username}")
def orgs_check_membership_for_user(call: Call) -> Reply:
    org = _org(call)
    if call.params["username"].lower() not in org.members:
        raise errors.NotFound()
    return no_content()


@route("GET", "/orgs/{org}/memberships/{username}")
def orgs_get_membership_for_user(call: Call) -> dict[str, Any]:
    org = _org(call)
    user = call.state.user(call.params["username"])
    if user is None or user.key not in org.members:
        raise errors.NotFound()
    return {"url": f"{call.base}/orgs/{org.login}/memberships/{user.login}", "state": "active",
            "role": org.members[user.key], "organization_url": f"{call.base}/orgs/{org.login}",
            "organization": org.simple_org(call.base), "user": user.simple(call.base)}


def _team(call: Call) -> Team:
    team = _org(call).teams.get(call.params["team_slug"].lower())
    if team is None:
        raise errors.NotFound()
    return team


@route("GET", "/orgs/{org}/teams")
def teams_list(call: Call) -> list[dict[str, Any]]:
    org = _org(call)
    if call.user.key not in org.members:
        raise errors.NotFound()
    return [t.to_dict(call.base) for t in call.page(sorted(org.teams.values(), key=lambda t: t.name.lower()))]


@route("GET", "/orgs/{org}/teams/{team_slug}")
def teams_get_by_name(call: Call) -> dict[str, Any]:
    return _team(call).full(call.base)


@route("GET", "/orgs/{org}/teams/{team_slug}/members")
def teams_list_members_in_org(call: Call) -> list[dict[str, Any]]:
    team = _team(call)
    role = call.query.get("role", "all")
    keys = [k for k, r in team.members.items() if role == "all" or r == role]
    return [call.state.users[k].simple(call.base) for k in call.page(sorted(keys)) if k in call.state.users]


@route("GET", "/orgs/{org}/teams/{team_slug}/repos")
def teams_list_repos_in_org(call: Call) -> list[dict[str, Any]]:
    team = _team(call)
    repos = [call.state.repos[k] for k in sorted(team.repos) if k in call.state.repos]
    return [r.to_dict(call.base, role=team.repos[r.key]) for r in call.page(repos)]


@route("GET", "/user/teams")
def teams_list_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    user = call.user
    teams = [t for org in call.state.orgs.values() for t in org.teams.values() if user.key in t.members]
    return [t.full(call.base) for t in call.page(teams)]


def repo_list(call: Call, repos: list[Repo], default_sort: str = "full_name") -> list[dict[str, Any]]:
    """Sort (``created``, ``updated``, ``pushed``, ``full_name``), page and render repositories."""
    sort = call.query.get("sort", default_sort)
    keys = {"created": lambda r: r.created_at, "updated": lambda r: r.updated_at,
            "pushed": lambda r: r.pushed_at}
    key = keys.get(sort)
    direction = call.query.get("direction", "asc" if key is None else "desc")
    ordered = sorted(repos, key=key or (lambda r: r.full_name.lower()), reverse=direction == "desc")
    return [r.to_dict(call.base, role=call.role(r)) for r in call.page(ordered)]
