"""The Okta replica's domain events (published on the environment's bus, tool ``okta``).

Every event carries ``actor`` (the trace actor: ``agent``, ``person:NAME``, ``world``).

- ``user_created`` {user, login, status}
- ``user_updated`` {user, login}: profile or credentials changed
- ``user_status_changed`` {user, login, from, to, operation}
- ``user_deleted`` {user, login}
- ``group_created`` / ``group_updated`` / ``group_deleted`` {group, name}
- ``group_member_added`` / ``group_member_removed`` {group, name, user, login}
- ``event_hook_created`` / ``_updated`` / ``_activated`` / ``_deactivated`` / ``_verified`` /
  ``_deleted`` {hook, name}

``user_updated`` also says what changed: ``profile`` and ``password`` (booleans).
"""

from __future__ import annotations

USER_CREATED = "user_created"
USER_UPDATED = "user_updated"
USER_STATUS_CHANGED = "user_status_changed"
USER_DELETED = "user_deleted"
GROUP_CREATED = "group_created"
GROUP_UPDATED = "group_updated"
GROUP_DELETED = "group_deleted"
GROUP_MEMBER_ADDED = "group_member_added"
GROUP_MEMBER_REMOVED = "group_member_removed"
EVENT_HOOK_CREATED = "event_hook_created"
EVENT_HOOK_UPDATED = "event_hook_updated"
EVENT_HOOK_ACTIVATED = "event_hook_activated"
EVENT_HOOK_DEACTIVATED = "event_hook_deactivated"
EVENT_HOOK_VERIFIED = "event_hook_verified"
EVENT_HOOK_DELETED = "event_hook_deleted"

EVENT_TYPES = frozenset({USER_CREATED, USER_UPDATED, USER_STATUS_CHANGED, USER_DELETED, GROUP_CREATED,
                         GROUP_UPDATED, GROUP_DELETED, GROUP_MEMBER_ADDED, GROUP_MEMBER_REMOVED,
                         EVENT_HOOK_CREATED, EVENT_HOOK_UPDATED, EVENT_HOOK_ACTIVATED, EVENT_HOOK_DEACTIVATED,
                         EVENT_HOOK_VERIFIED, EVENT_HOOK_DELETED})
USER_EVENTS = frozenset({USER_CREATED, USER_STATUS_CHANGED, USER_DELETED})
"""What can change a user's status or existence (the ``okta.user`` check watches these)."""
