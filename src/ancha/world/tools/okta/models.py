"""The Okta org's state: users and groups, indexed, with Okta's wire shapes.

Ids grow with creation (``00u`` + a sequence + random tail), so the id order Okta lists
in is creation order and an ``after`` cursor is just the last id seen. Users are found by
id or by login (case-insensitively, as Okta does); memberships are kept both ways.
"""

from __future__ import annotations

import bisect
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ALPHABET = string.digits + string.ascii_uppercase + string.ascii_lowercase
"""Base62 in ASCII order, so that ids compare in creation order."""
USER_TYPE_ID = "oty1default0000000x7"
PROFILE_FIELDS = ("login", "email", "firstName", "lastName", "mobilePhone", "secondEmail")


def okta_time(at: float) -> str:
    """Okta's timestamp form: ``2026-03-02T09:00:00.000Z``."""
    moment = datetime.fromtimestamp(at, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(slots=True)
class User:
    id: str
    status: str
    profile: dict[str, Any]
    created: float
    last_updated: float
    status_changed: float | None = None
    activated: float | None = None
    password_changed: float | None = None
    has_password: bool = False
    ref: str | None = None
    seeded: bool = False
    groups: set[str] = field(default_factory=set)
    """Group ids (the built-in Everyone included)."""

    @property
    def login(self) -> str:
        return str(self.profile.get("login") or "")

    def to_dict(self, base_url: str) -> dict[str, Any]:
        href = f"{base_url}/api/v1/users/{self.id}"
        return {
            "id": self.id,
            "status": self.status,
            "created": okta_time(self.created),
            "activated": okta_time(self.activated) if self.activated is not None else None,
            "statusChanged": okta_time(self.status_changed) if self.status_changed is not None else None,
            "lastLogin": None,
            "lastUpdated": okta_time(self.last_updated),
            "passwordChanged": okta_time(self.password_changed) if self.password_changed is not None else None,
            "type": {"id": USER_TYPE_ID},
            "profile": dict(self.profile),
            "credentials": {**({"password": {}} if self.has_password else {}),
                            "provider": {"type": "OKTA", "name": "OKTA"}},
            "_links": {"self": {"href": href}, **_user_links(self, href)},
        }


def _user_links(user: User, href: str) -> dict[str, Any]:
    """The lifecycle links Okta shows for a user in this status (what may be done next)."""
    names: dict[str, tuple[str, ...]] = {
        "STAGED": ("activate", "deactivate"),
        "PROVISIONED": ("reactivate", "resetPassword", "deactivate"),
        "ACTIVE": ("suspend", "resetPassword", "expirePassword", "deactivate"),
        "RECOVERY": ("resetPassword", "expirePassword", "deactivate"),
        "LOCKED_OUT": ("unlock", "resetPassword", "expirePassword", "deactivate"),
        "PASSWORD_EXPIRED": ("resetPassword", "expirePassword", "deactivate"),
        "SUSPENDED": ("unsuspend", "deactivate"),
        "DEPROVISIONED": ("activate",),
    }
    paths = {"activate": "activate", "deactivate": "deactivate", "reactivate": "reactivate",
             "resetPassword": "reset_password", "expirePassword": "expire_password", "suspend": "suspend",
             "unsuspend": "unsuspend", "unlock": "unlock"}
    return {name: {"href": f"{href}/lifecycle/{paths[name]}", "method": "POST"}
            for name in names.get(user.status, ())}


@dataclass(slots=True)
class Group:
    id: str
    name: str
    description: str | None
    created: float
    last_updated: float
    last_membership_updated: float
    type: str = "OKTA_GROUP"
    ref: str | None = None
    seeded: bool = False
    members: set[str] = field(default_factory=set)

    def to_dict(self, base_url: str) -> dict[str, Any]:
        href = f"{base_url}/api/v1/groups/{self.id}"
        return {
            "id": self.id,
            "created": okta_time(self.created),
            "lastUpdated": okta_time(self.last_updated),
            "lastMembershipUpdated": okta_time(self.last_membership_updated),
            "objectClass": ["okta:user_group"],
            "type": self.type,
            # The vendor's OktaUserGroupProfile has no null description: it is left out.
            "profile": {"name": self.name, **({"description": self.description} if self.description is not None
                                              else {})},
            "_links": {
                # Okta links its CDN; these lead back to the replica, which serves them.
                "logo": [{"name": "medium", "href": f"{base_url}/assets/img/logos/groups/okta-medium.png",
                          "type": "image/png"},
                         {"name": "large", "href": f"{base_url}/assets/img/logos/groups/okta-large.png",
                          "type": "image/png"}],
                "users": {"href": f"{href}/users"},
                "apps": {"href": f"{href}/apps"},
            },
        }


class IdMaker:
    """Ids such as ``00u0001AbCdEfGhIjKlM``: prefix, a 4-digit base62 sequence, a random tail."""

    def __init__(self, rng: Any) -> None:
        self.rng = rng
        self.counts: dict[str, int] = {}

    def make(self, prefix: str) -> str:
        n = self.counts[prefix] = self.counts.get(prefix, 0) + 1
        seq = ""
        for _ in range(4):
            n, digit = divmod(n, 62)
            seq = ALPHABET[digit] + seq
        tail = "".join(self.rng.choice(ALPHABET) for _ in range(13))
        return prefix + seq + tail


class Ordered:
    """Ids kept sorted (creation order): pages after a cursor without a scan."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def add(self, item: str) -> None:
        bisect.insort(self.ids, item)

    def remove(self, item: str) -> None:
        index = bisect.bisect_left(self.ids, item)
        if index < len(self.ids) and self.ids[index] == item:
            del self.ids[index]

    def after(self, cursor: str | None) -> Iterator[str]:
        start = bisect.bisect_right(self.ids, cursor) if cursor else 0
        return iter(self.ids[start:])


class OktaState:
    """Users and groups of one org, with indexes by login and name."""

    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.groups: dict[str, Group] = {}
        self.user_order = Ordered()
        self.group_order = Ordered()
        self.by_login: dict[str, str] = {}
        self.by_group_name: dict[str, str] = {}
        self.deleted: dict[str, User] = {}
        """Users deleted during the trial, by id (checks say they no longer exist)."""

    def add_user(self, user: User) -> None:
        self.users[user.id] = user
        self.user_order.add(user.id)
        self.by_login[user.login.casefold()] = user.id

    def relogin(self, user: User, old_login: str) -> None:
        self.by_login.pop(old_login.casefold(), None)
        self.by_login[user.login.casefold()] = user.id

    def remove_user(self, user: User) -> None:
        del self.users[user.id]
        self.user_order.remove(user.id)
        self.by_login.pop(user.login.casefold(), None)
        for group_id in user.groups:
            group = self.groups.get(group_id)
            if group is not None:
                group.members.discard(user.id)
        user.groups = set()
        self.deleted[user.id] = user

    def user(self, id_or_login: str) -> User | None:
        """By id, else by login (case-insensitive)."""
        found = self.users.get(id_or_login)
        if found is not None:
            return found
        user_id = self.by_login.get(id_or_login.casefold())
        return self.users.get(user_id) if user_id else None

    def add_group(self, group: Group) -> None:
        self.groups[group.id] = group
        self.group_order.add(group.id)
        self.by_group_name[group.name.casefold()] = group.id

    def rename_group(self, group: Group, old: str) -> None:
        self.by_group_name.pop(old.casefold(), None)
        self.by_group_name[group.name.casefold()] = group.id

    def remove_group(self, group: Group) -> None:
        del self.groups[group.id]
        self.group_order.remove(group.id)
        self.by_group_name.pop(group.name.casefold(), None)
        for user_id in group.members:
            user = self.users.get(user_id)
            if user is not None:
                user.groups.discard(group.id)
