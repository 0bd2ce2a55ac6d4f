"""How the console's world diff shows Okta: a user's status and groups, a group's members; the
timestamps and lifecycle links that follow a status change as bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.kernel.rendered import Field, ObjectChange, Rendered, dig, field, fields, shown

USER_BOOKKEEPING = frozenset({"_links", "lastUpdated", "statusChanged", "lastLogin", "passwordChanged",
                              "transitioningToStatus"})
GROUP_BOOKKEEPING = frozenset({"_links", "lastUpdated", "lastMembershipUpdated"})


def render(change: ObjectChange) -> Rendered | None:
    if not isinstance(change.current, Mapping):
        return None
    if change.collection in ("users", "deleted_users"):
        return _user(change)
    if change.collection == "groups":
        group: Mapping[str, Any] = change.current
        return Rendered("object", f"group {shown(dig(group, 'profile.name'))}",
                        fields(field(change, "members", "members"), field(change, "description",
                                                                          "profile.description")),
                        bookkeeping=change.only_changed(GROUP_BOOKKEEPING))
    return None


def _user(change: ObjectChange) -> Rendered:
    user: Mapping[str, Any] = change.current
    name = " ".join(str(p) for p in (dig(user, "profile.firstName"), dig(user, "profile.lastName")) if p)
    login = dig(user, "profile.login")
    title = f"user {name} ({login})" if name and login else f"user {name or login or user.get('id')}"
    if change.collection == "deleted_users":
        title += ", deleted"
    status_changed = "status" in change.changed_names or change.kind != "changed"
    return Rendered(
        "user", title,
        fields(field(change, "status", "status"),
               Field("since", change.when(user.get("statusChanged"))) if status_changed and user.get(
                   "statusChanged") else None,
               field(change, "groups", "groups"), field(change, "email", "profile.email")
               if "profile" in change.changed_names else None),
        bookkeeping=change.only_changed(USER_BOOKKEEPING),
    )

