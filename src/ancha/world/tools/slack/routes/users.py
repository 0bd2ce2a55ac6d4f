"""auth.*, api.test and users.*: who the caller is, and the workspace's people."""

from __future__ import annotations

from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import Channel
from ancha.world.tools.slack.params import encode_cursor
from ancha.world.tools.slack.routes.channel_pages import channel_page

USERS_MAX = 1000
CONVERSATIONS_MAX = 1000


def auth_test(call: Call) -> dict[str, Any]:
    state = call.state
    user = state.users[call.caller.user_id]
    body: dict[str, Any] = {
        "ok": True, "url": f"{call.replica.urls.workspace}/", "team": state.team["name"],
        "user": user.name, "team_id": state.team["id"], "user_id": user.id,
    }
    if user.is_bot:
        body["bot_id"] = user.bot_id
    body["is_enterprise_install"] = False
    return body


def users_list(call: Call) -> dict[str, Any]:
    p = call.params
    # Without a limit Slack answers every member in one page.
    limit = p.limit(USERS_MAX, USERS_MAX)
    users = list(call.state.users.values())
    start = 0
    after = p.cursor("user")
    if after is not None:
        ids = [u.id for u in users]
        if after not in ids:
            raise errors.InvalidCursor()
        start = ids.index(after)
    end = start + limit
    next_cursor = encode_cursor("user", users[end].id) if end < len(users) else ""
    return {"ok": True, "members": [u.to_dict() for u in users[start:end]],
            "cache_ts": int(call.replica.world.clock.peek()),
            "response_metadata": {"next_cursor": next_cursor}}


def users_info(call: Call) -> dict[str, Any]:
    user_id = call.params.get_str("user")
    user = call.state.users.get(user_id.strip()) if user_id else None
    if user is None:
        raise errors.UserNotFound()
    return {"ok": True, "user": user.to_dict()}


def users_lookup_by_email(call: Call) -> dict[str, Any]:
    email = call.params.get_str("email")
    user_id = call.state.user_ids_by_email.get(email.strip().lower()) if email else None
    if user_id is None:
        raise errors.UsersNotFound()
    return {"ok": True, "user": call.state.users[user_id].to_dict()}


def users_conversations(call: Call) -> dict[str, Any]:
    """The conversations a person is in that the caller can see, a page at a time."""
    p = call.params
    user_id = (p.get_str("user") or call.caller.user_id).strip()
    if user_id not in call.state.users:
        raise errors.UserNotFound()
    limit = p.limit(100, CONVERSATIONS_MAX, errors.InvalidLimit)

    def render(channel: Channel) -> dict[str, Any]:
        conversation = channel.to_dict(call.caller.user_id)
        conversation.pop("is_member", None)  # Slack leaves is_member and num_members out here
        return conversation

    return channel_page(call, limit, errors.InvalidTypes("[ERROR] types are public_channel, private_channel, mpim and im"),
                        lambda channel: user_id in channel.member_set, render)


ROUTES: dict[str, Handler] = {
    "auth.test": auth_test,
    "users.list": users_list,
    "users.info": users_info,
    "users.lookupByEmail": users_lookup_by_email,
    "users.conversations": users_conversations,
}

PARTIAL: dict[str, str] = {
    "users.list": "no include_locale; presence is not tracked",
    "users.info": "no include_locale",
    "users.conversations": "no team_id (Enterprise Grid)",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
