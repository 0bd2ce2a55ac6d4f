"""Collaborators: who has which role on a repository."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, created, no_content
from ancha.world.tools.github.models import Account, Org, Repo, User, role_rank
from ancha.world.tools.github.models.invitations import RepoInvitation, invitations_of
from ancha.world.tools.github.router import route

_ROLE_OF_PARAM = {"pull": "read", "triage": "triage", "push": "write", "maintain": "maintain", "admin": "admin"}
_LEGACY = {"read": "read", "triage": "read", "write": "write", "maintain": "write", "admin": "admin"}


def _collaborator(call: Call, repo: Repo, account: Account, role: str) -> dict[str, Any]:
    rank = role_rank(role)
    return {**account.simple(call.base), "permissions": {"admin": rank >= 5, "maintain": rank >= 4,
                                                         "push": rank >= 3, "triage": rank >= 2, "pull": rank >= 1},
            "role_name": role}


def _with_access(call: Call, repo: Repo, affiliation: str) -> list[tuple[User, str]]:
    found: list[tuple[User, str]] = []
    for user in call.state.users.values():
        direct = user.key in repo.collaborators
        in_org = isinstance(repo.owner, Org) and user.key in repo.owner.members
        if affiliation == "direct" and not direct and user.key != repo.owner.key:
            continue
        if affiliation == "outside" and (in_org or not direct):
            continue
        role = call.state.role(repo, user)
        if role is None or (not direct and not in_org and user.key != repo.owner.key):
            continue  # public read alone does not make a collaborator
        found.append((user, role))
    return sorted(found, key=lambda pair: pair[0].id)


@route("GET", "/repos/{owner}/{repo}/collaborators")
def repos_list_collaborators(call: Call) -> list[dict[str, Any]]:
    repo = call.repo()
    if not call.can(repo, "write"):
        raise errors.Forbidden("Must have push access to view repository collaborators.")
    affiliation = call.q_enum("affiliation", ("outside", "direct", "all"), "all")
    wanted = call.query.get("permission")
    pairs = [(u, r) for u, r in _with_access(call, repo, affiliation)
             if wanted is None or _ROLE_OF_PARAM.get(wanted) == r]
    return [_collaborator(call, repo, u, r) for u, r in call.page(pairs)]


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}")
def repos_check_collaborator(call: Call) -> Reply:
    repo = call.repo()
    user = call.state.user(call.params["username"])
    if user is None or all(u.key != user.key for u, _ in _with_access(call, repo, "all")):
        raise errors.NotFound()
    return no_content()


@route("PUT", "/repos/{owner}/{repo}/collaborators/{username}")
def repos_add_collaborator(call: Call) -> Reply:
    """A new collaborator is invited (201 with the invitation) and has the role once they accept
    (``PATCH /user/repository_invitations/{id}``); an existing collaborator's role, or an org
    member's on an org repository, changes at once (204), as on GitHub."""
    repo = call.repo(need="admin")
    user = call.state.user(call.params["username"])
    if user is None:
        raise errors.NotFound()
    param = call.field_str("permission", allow_none=False, default="push") or "push"
    role = _ROLE_OF_PARAM.get(param)
    if role is None:
        raise errors.ValidationFailed({"resource": "Repository", "code": "custom", "field": "permission",
                                       "message": f"{param} is not a valid permission."})
    if user.key == repo.owner.key:
        raise errors.ValidationFailed({"resource": "Repository", "code": "custom", "field": "username",
                                       "message": "Repository owner cannot be a collaborator"})
    in_org = isinstance(repo.owner, Org) and user.key in repo.owner.members
    if user.key in repo.collaborators or in_org:
        repo.collaborators[user.key] = role
        call.replica.publish("collaborator_added", repo, call.user, call.actor, collaborator=user.login,
                             permission=role)
        return no_content()
    pending = next((i for i in invitations_of(repo) if i.invitee.key == user.key), None)
    if pending is None:
        pending = RepoInvitation(call.state.ids.next("invitation"), repo, user, call.user, role, call.now())
        invitations_of(repo).append(pending)
    else:
        pending.role = role
    return created(pending.to_dict(call.base))


@route("DELETE", "/repos/{owner}/{repo}/collaborators/{username}")
def repos_remove_collaborator(call: Call) -> Reply:
    repo = call.repo()
    user = call.state.user(call.params["username"])
    if user is not None and user.key == call.user.key:
        pass  # anyone may leave a repository
    else:
        repo = call.repo(need="admin")
    if user is not None and repo.collaborators.pop(user.key, None) is not None:
        call.replica.publish("collaborator_removed", repo, call.user, call.actor, collaborator=user.login)
    return no_content()


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
def repos_get_collaborator_permission_level(call: Call) -> dict[str, Any]:
    repo = call.repo()
    user = call.state.user(call.params["username"])
    if user is None:
        raise errors.NotFound()
    role = call.state.role(repo, user)
    return {"permission": _LEGACY.get(role, "none") if role is not None else "none",
            "role_name": role or "none", "user": _collaborator(call, repo, user, role or "read")}
