"""Repository invitations: the admin's view (list, change the permission, delete) and the
invitee's (list theirs, accept, decline). ``PUT /repos/{o}/{r}/collaborators/{u}`` makes them
(routes/collaborators.py)."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.github import errors
from ancha.world.tools.github.call import Call, Reply, no_content
from ancha.world.tools.github.models.invitations import RepoInvitation, invitations_of
from ancha.world.tools.github.router import route

_ROLES = {"read": "read", "triage": "triage", "write": "write", "maintain": "maintain", "admin": "admin"}


def _for_repo(call: Call) -> RepoInvitation:
    repo = call.repo(need="admin")
    wanted = call.number("invitation_id")
    found = next((i for i in invitations_of(repo) if i.id == wanted), None)
    if found is None:
        raise errors.NotFound()
    return found


def _mine(call: Call) -> list[RepoInvitation]:
    user = call.user
    return [
        i for repo in call.state.repos.values() for i in invitations_of(repo) if i.invitee.key == user.key
    ]


def _own(call: Call) -> RepoInvitation:
    wanted = call.number("invitation_id")
    found = next((i for i in _mine(call) if i.id == wanted), None)
    if found is None:
        raise errors.NotFound()
    return found


@route("GET", "/repos/{owner}/{repo}/invitations")
def repos_list_invitations(call: Call) -> list[dict[str, Any]]:
    repo = call.repo(need="admin")
    return [i.to_dict(call.base) for i in call.page(invitations_of(repo))]


@route("PATCH", "/repos/{owner}/{repo}/invitations/{invitation_id}")
def repos_update_invitation(call: Call) -> dict[str, Any]:
    invitation = _for_repo(call)
    wanted = call.field_str("permissions", allow_none=False)
    if wanted is not None:
        if wanted not in _ROLES:
            raise errors.invalid_request(
                f"For 'permissions', \"{wanted}\" is not one of {', '.join(_ROLES)}."
            )
        invitation.role = _ROLES[wanted]
    return invitation.to_dict(call.base)


@route("DELETE", "/repos/{owner}/{repo}/invitations/{invitation_id}")
def repos_delete_invitation(call: Call) -> Reply:
    invitation = _for_repo(call)
    invitations_of(invitation.repo).remove(invitation)
    return no_content()


@route("GET", "/user/repository_invitations")
def repos_list_invitations_for_authenticated_user(call: Call) -> list[dict[str, Any]]:
    return [i.to_dict(call.base) for i in call.page(_mine(call))]


@route("PATCH", "/user/repository_invitations/{invitation_id}")
def repos_accept_invitation_for_authenticated_user(call: Call) -> Reply:
    invitation = _own(call)
    repo = invitation.repo
    invitations_of(repo).remove(invitation)
    repo.collaborators[invitation.invitee.key] = invitation.role
    call.replica.publish(
        "collaborator_added",
        repo,
        invitation.inviter,
        call.actor,
        collaborator=invitation.invitee.login,
        permission=invitation.role,
    )
    return no_content()


@route("DELETE", "/user/repository_invitations/{invitation_id}")
def repos_decline_invitation_for_authenticated_user(call: Call) -> Reply:
    invitation = _own(call)
    invitations_of(invitation.repo).remove(invitation)
    return no_content()
