"""Repository invitations: a collaborator added who is not one yet, until they accept.

They live in ``Repo.extra["invitations"]`` (so they go with the repository, renamed or
deleted), in the order made. Accepting makes the invitee a collaborator with the role;
declining or the admin's delete drops it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ancha.world.tools.github.models.repos import Repo
from ancha.world.tools.github.models.users import Account, User
from ancha.world.tools.github.models.wire import JSONDict, iso, node_id, web_url

PERMISSION_NAMES = {
    "read": "read",
    "triage": "triage",
    "write": "write",
    "maintain": "maintain",
    "admin": "admin",
}


@dataclass(slots=True)
class RepoInvitation:
    id: int
    repo: Repo
    invitee: User
    inviter: Account
    role: str
    created_at: float

    def to_dict(self, base: str) -> JSONDict:
        """``repository-invitation``."""
        return {
            "id": self.id,
            "node_id": node_id("RepositoryInvitation", self.id),
            "repository": self.repo.to_dict(base),
            "invitee": self.invitee.simple(base),
            "inviter": self.inviter.simple(base),
            "permissions": PERMISSION_NAMES[self.role],
            "created_at": iso(self.created_at),
            "expired": False,
            "url": f"{base}/user/repository_invitations/{self.id}",
            "html_url": f"{web_url(base)}/{self.repo.full_name}/invitations",
        }


def invitations_of(repo: Repo) -> list[RepoInvitation]:
    found = repo.extra.setdefault("invitations", [])
    assert isinstance(found, list)
    return found
