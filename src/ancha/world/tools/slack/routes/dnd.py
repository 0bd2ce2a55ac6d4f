"""dnd.*: whether people have Do Not Disturb on.

No one in the replica sets a Do Not Disturb schedule or snoozes, so everyone answers as
a Slack user with DnD off does: ``dnd_enabled`` false and ``next_dnd_*_ts`` 1.
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler

MAX_TEAM_USERS = 50


def dnd_info(call: Call) -> dict[str, Any]:
    user_id = (call.params.get_str("user") or call.caller.user_id).strip()
    if user_id not in call.state.users:
        raise errors.UserNotFound()
    return {"ok": True, **_off(), "snooze_enabled": False}


def dnd_team_info(call: Call) -> dict[str, Any]:
    users = [u.strip() for u in call.params.required("users").split(",") if u.strip()]
    if len(users) > MAX_TEAM_USERS:
        raise errors.InvalidArguments(f"[ERROR] no more than {MAX_TEAM_USERS} users allowed")
    return {"ok": True, "users": {u: _off() for u in users if u in call.state.users}}


def _off() -> dict[str, Any]:
    return {"dnd_enabled": False, "next_dnd_start_ts": 1, "next_dnd_end_ts": 1}


ROUTES: dict[str, Handler] = {
    "dnd.info": dnd_info,
    "dnd.teamInfo": dnd_team_info,
}

PARTIAL: dict[str, str] = {
    "dnd.info": "no Do Not Disturb schedules or snoozes: everyone has DnD off",
    "dnd.teamInfo": "no Do Not Disturb schedules or snoozes: everyone has DnD off",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
