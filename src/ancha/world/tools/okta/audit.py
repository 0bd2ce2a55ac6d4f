"""What the System Log says about each change: a domain event -> Okta's ``LogEvent`` types.

Each write of the replica publishes one domain event (``events.py``); ``entries_for``
answers the System Log entries Okta writes for it: the ``eventType`` of Okta's event
catalog, its ``displayMessage``, its ``legacyEventType`` and the targets (the user, the
group, the event hook). Creating an active user logs the creation and the activation,
as Okta does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ancha.world.tools.okta import events as ev
from ancha.world.tools.okta.system_log import Target

if TYPE_CHECKING:
    from ancha.world.tools.okta.models import OktaState


@dataclass(frozen=True, slots=True)
class Entry:
    event_type: str
    message: str
    legacy: str | None
    targets: list[Target]


_STATUS_OPERATIONS: dict[str, tuple[str, str, str | None]] = {
    "activate": ("user.lifecycle.activate", "Activate Okta user", "core.user.config.user_activated"),
    "reactivate": ("user.lifecycle.reactivate", "Reactivate Okta user", "core.user.config.user_reactivated"),
    "deactivate": ("user.lifecycle.deactivate", "Deactivate Okta user", "core.user.config.user_deactivated"),
    "suspend": ("user.lifecycle.suspend", "Suspend Okta user", "core.user.config.user_suspended"),
    "unsuspend": ("user.lifecycle.unsuspend", "Unsuspend Okta user", "core.user.config.user_unsuspended"),
    "unlock": ("user.account.unlock", "Unlock user account", "core.user.config.user_unlocked"),
    "reset_password": (
        "user.account.reset_password",
        "Reset password for Okta user",
        "core.user.config.password_reset",
    ),
    "expire_password": (
        "user.account.expire_password",
        "Expire password for Okta user",
        "core.user.config.password_expired",
    ),
    "lock": ("user.account.lock", "Max sign in attempts exceeded", "core.user_auth.account_locked"),
}
"""A lifecycle operation -> (eventType, displayMessage, legacyEventType). ``set_password``
(an admin setting a password completes a pending one) is logged by the password update."""

_GROUPS: dict[str, tuple[str, str, str | None]] = {
    ev.GROUP_CREATED: ("group.lifecycle.create", "Create Okta group", "core.user_group.created"),
    ev.GROUP_UPDATED: (
        "group.profile.update",
        "Update Okta group profile",
        "core.user_group.profile_updated",
    ),
    ev.GROUP_DELETED: ("group.lifecycle.delete", "Delete Okta group", "core.user_group.deleted"),
    ev.GROUP_MEMBER_ADDED: (
        "group.user_membership.add",
        "Add user to group membership",
        "core.user_group_member.user_add",
    ),
    ev.GROUP_MEMBER_REMOVED: (
        "group.user_membership.remove",
        "Remove user from group membership",
        "core.user_group_member.user_remove",
    ),
}

EVENT_HOOK_TYPES: dict[str, tuple[str, str]] = {
    ev.EVENT_HOOK_CREATED: ("event_hook.created", "Event hook created"),
    ev.EVENT_HOOK_UPDATED: ("event_hook.updated", "Event hook updated"),
    ev.EVENT_HOOK_ACTIVATED: ("event_hook.activated", "Event hook activated"),
    ev.EVENT_HOOK_DEACTIVATED: ("event_hook.deactivated", "Event hook deactivated"),
    ev.EVENT_HOOK_VERIFIED: ("event_hook.verified", "Event hook verified"),
    ev.EVENT_HOOK_DELETED: ("event_hook.deleted", "Event hook deleted"),
}

ACTIVATED_ON_CREATE = frozenset({"ACTIVE", "PROVISIONED", "PASSWORD_EXPIRED"})


def user_target(user_id: str, login: str, profile: dict[str, Any] | None) -> Target:
    profile = profile or {}
    name = " ".join(str(p) for p in (profile.get("firstName"), profile.get("lastName")) if p)
    return Target(user_id, "User", login, name or login)


def entries_for(kind: str, data: dict[str, Any], state: OktaState) -> list[Entry]:
    """The System Log entries for one domain event (none for one Okta does not log)."""
    user_id = str(data.get("user") or "")
    user = state.users.get(user_id) or state.deleted.get(user_id)
    who = user_target(user_id, str(data.get("login") or ""), user.profile if user is not None else None)
    if kind == ev.USER_CREATED:
        out = [
            Entry(
                "user.lifecycle.create", "Create Okta user", "core.user.config.user_creation.success", [who]
            )
        ]
        if data.get("status") in ACTIVATED_ON_CREATE:
            out.append(Entry(*_STATUS_OPERATIONS["activate"], [who]))
        return out
    if kind == ev.USER_UPDATED:
        out = []
        if data.get("profile", True):
            out.append(
                Entry(
                    "user.account.update_profile",
                    "Update user profile for Okta",
                    "core.user.config.profile_update.success",
                    [who],
                )
            )
        if data.get("password"):
            out.append(
                Entry(
                    "user.account.update_password",
                    "User update password for Okta",
                    "core.user.config.password_update.success",
                    [who],
                )
            )
        return out
    if kind == ev.USER_STATUS_CHANGED:
        found = _STATUS_OPERATIONS.get(str(data.get("operation")))
        return [Entry(*found, [who])] if found is not None else []
    if kind == ev.USER_DELETED:
        return [
            Entry(
                "user.lifecycle.delete.initiated", "Delete Okta user", "core.user.config.user_deleted", [who]
            )
        ]
    if kind in _GROUPS:
        group = Target(
            str(data.get("group") or ""),
            "UserGroup",
            str(data.get("name") or ""),
            str(data.get("name") or ""),
        )
        targets = [who, group] if kind in (ev.GROUP_MEMBER_ADDED, ev.GROUP_MEMBER_REMOVED) else [group]
        return [Entry(*_GROUPS[kind], targets)]
    if kind in EVENT_HOOK_TYPES:
        event_type, message = EVENT_HOOK_TYPES[kind]
        hook = Target(
            str(data.get("hook") or ""), "EventHook", str(data.get("name") or ""), str(data.get("name") or "")
        )
        return [Entry(event_type, message, None, [hook])]
    return []
