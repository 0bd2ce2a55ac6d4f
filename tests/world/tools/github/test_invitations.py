"""Repository invitations: adding someone who is not a collaborator invites them (201);
they are a collaborator once they accept; the admin can change or withdraw the invitation."""

from __future__ import annotations

from typing import Any

import pytest
from github import UnknownObjectException

GH = Any  # conftest.GH


def test_add_collaborator__invites_and_accepting_grants_the_role(gh: GH, matches_spec: Any) -> None:
    laura = gh.as_user("laura")
    answer = gh.raw(
        "PUT",
        "/repos/laura/vault/collaborators/carol",
        token=gh.token_for("laura"),
        json={"permission": "push"},
    )
    assert answer.status_code == 201
    matches_spec("PUT", "/repos/{owner}/{repo}/collaborators/{username}", answer.json(), 201)
    assert answer.json()["permissions"] == "write" and answer.json()["invitee"]["login"] == "carol"
    pending = laura.get_repo("laura/vault").get_pending_invitations()
    assert [i.invitee.login for i in pending] == ["carol"]
    carol = gh.as_user("carol")
    with pytest.raises(UnknownObjectException):
        carol.get_repo("laura/vault")
    [invitation] = carol.get_user().get_invitations()
    assert invitation.repository.full_name == "laura/vault"
    carol.get_user().accept_invitation(invitation)
    assert carol.get_repo("laura/vault").permissions.push is True
    assert list(laura.get_repo("laura/vault").get_pending_invitations()) == []
    # Already a collaborator: the role changes at once (204).
    again = gh.raw(
        "PUT",
        "/repos/laura/vault/collaborators/carol",
        token=gh.token_for("laura"),
        json={"permission": "admin"},
    )
    assert again.status_code == 204


def test_invitation__admin_updates_and_withdraws_invitee_declines(gh: GH) -> None:
    laura = gh.token_for("laura")
    made = gh.raw("PUT", "/repos/laura/vault/collaborators/ben", token=laura).json()
    changed = gh.raw(
        "PATCH", f"/repos/laura/vault/invitations/{made['id']}", token=laura, json={"permissions": "maintain"}
    )
    assert changed.status_code == 200 and changed.json()["permissions"] == "maintain"
    assert gh.raw("GET", "/repos/laura/vault/invitations").status_code == 404  # not theirs to see
    assert gh.raw("DELETE", f"/repos/laura/vault/invitations/{made['id']}", token=laura).status_code == 204
    assert gh.raw("GET", "/user/repository_invitations", token=gh.token_for("ben")).json() == []
    second = gh.raw("PUT", "/repos/laura/vault/collaborators/ben", token=laura).json()
    ben = gh.token_for("ben")
    assert gh.raw("DELETE", f"/user/repository_invitations/{second['id']}", token=ben).status_code == 204
    assert gh.raw("GET", "/repos/laura/vault", token=ben).status_code == 404


def test_org_member__added_to_an_org_repository_at_once(gh: GH) -> None:
    answer = gh.raw(
        "PUT",
        "/repos/acme/orders/collaborators/ben",
        token=gh.token_for("laura"),
        json={"permission": "admin"},
    )
    assert answer.status_code == 204
    assert gh.client.get_repo("acme/orders").get_collaborator_role_name("ben") == "admin"
