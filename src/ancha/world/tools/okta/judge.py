"""What the judge sees of Okta: every user with status and groups (deleted users too), and
the event hooks registered, from the replica's snapshot (``world.json``'s ``okta``)."""

from __future__ import annotations

from typing import Any


def judge_view(snapshot: dict[str, Any]) -> str:
    lines = ["Okta users (final state):"]
    for user in snapshot.get("users") or []:
        if not isinstance(user, dict):
            continue
        profile = user.get("profile") or {}
        name = " ".join(str(p) for p in (profile.get("firstName"), profile.get("lastName")) if p)
        groups = ", ".join(str(g) for g in user.get("groups") or [] if g != "Everyone") or "no groups"
        lines.append(f"- {profile.get('login')} ({name or 'no name'}): {user.get('status')}; groups: {groups}")
    if len(lines) == 1:
        lines.append("(none)")
    deleted = [u for u in snapshot.get("deleted_users") or [] if isinstance(u, dict)]
    if deleted:
        lines.append("Okta users deleted during the attempt: " + ", ".join(str(u.get("login")) for u in deleted))
    for hook in snapshot.get("event_hooks") or []:
        if isinstance(hook, dict):
            items = ", ".join(str(i) for i in (hook.get("events") or {}).get("items") or [])
            lines.append(f"Okta event hook {hook.get('name')!r}: {hook.get('status')}, "
                         f"{hook.get('verificationStatus')}; events: {items or 'none'}")
    return "\n".join(lines)
