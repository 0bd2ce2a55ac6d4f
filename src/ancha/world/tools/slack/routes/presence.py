"""users.getPresence and users.setPresence: whether someone is around.

Everyone is active unless they set themselves away (``users.setPresence``) or were
deactivated: the replica has no idle timer. (Do Not Disturb is ``dnd.py``'s.)
"""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import User


def users_get_presence(call: Call) -> dict[str, Any]:
    user = _user(call)
    presence = "away" if user.away or user.deleted else "active"
    body: dict[str, Any] = {"ok": True, "presence": presence}
    if user.id == call.caller.user_id:  # Slack tells the caller more about themself
        body.update(online=presence == "active", auto_away=False, manual_away=user.away,
                    connection_count=1 if presence == "active" else 0,
                    last_activity=int(call.replica.world.clock.peek()))
    return body


def users_set_presence(call: Call) -> dict[str, Any]:
    presence = (call.params.get_str("presence") or "").strip().lower()
    if presence not in ("auto", "away"):
        raise errors.InvalidPresence("[ERROR] presence must be auto or away")
    call.state.users[call.caller.user_id].away = presence == "away"
    return {"ok": True}


def users_set_active(call: Call) -> dict[str, Any]:
    # Slack retired what this did (mark the caller active) but still answers it, with nothing done.
    return {"ok": True}


def _user(call: Call) -> User:
    user_id = (call.params.get_str("user") or call.caller.user_id).strip()
    user = call.state.users.get(user_id)
    if user is None:
        raise errors.UserNotFound()
    return user


ROUTES: dict[str, Handler] = {
    "users.getPresence": users_get_presence,
    "users.setPresence": users_set_presence,
    "users.setActive": users_set_active,
}

PARTIAL: dict[str, str] = {
    "users.getPresence": "no idle timer: active unless set away or deactivated",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
