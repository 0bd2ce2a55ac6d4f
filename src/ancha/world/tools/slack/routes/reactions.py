"""reactions.*: emoji reactions on messages."""

from __future__ import annotations

import re
from typing import Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.call import Call, Handler
from ancha.world.tools.slack.models import Channel, Message, ts_key
from ancha.world.tools.slack.params import encode_cursor

LIST_MAX = 1000

# Emoji names: lower-case letters, digits and - _ + ' (with an optional skin tone).
_NAME = re.compile(r"[a-z0-9_+'\-]{1,100}(::skin-tone-[2-6])?")


def reactions_add(call: Call) -> dict[str, Any]:
    channel, message = _item(call)
    name = _name(call)
    users = message.reactions.get(name)
    if users is not None and call.caller.user_id in users:
        raise errors.AlreadyReacted()
    call.replica.react(message, channel, name, call.caller, added=True)
    return {"ok": True}


def reactions_remove(call: Call) -> dict[str, Any]:
    channel, message = _item(call)
    name = _name(call)
    users = message.reactions.get(name)
    if users is None or call.caller.user_id not in users:
        raise errors.NoReaction()
    call.replica.react(message, channel, name, call.caller, added=False)
    return {"ok": True}


def reactions_get(call: Call) -> dict[str, Any]:
    channel, message = _item(call, reading=True)
    return {"ok": True, "type": "message", "channel": channel.id, "message": message.to_dict()}


def reactions_list(call: Call) -> dict[str, Any]:
    """The messages a person reacted to, most recent reaction first, that the caller can see."""
    p = call.params
    user_id = (p.get_str("user") or call.caller.user_id).strip()
    if user_id not in call.state.users:
        raise errors.UserNotFound()
    paged = p.has("page") and not p.has("cursor")  # Slack's older count/page paging
    if paged:
        per_page = max(1, min(p.get_int("count", 100), LIST_MAX))
        page = max(1, p.get_int("page", 1))
        start, limit = (page - 1) * per_page, per_page
    else:
        limit = p.limit(100, LIST_MAX)
        after = p.cursor("item")
        start = 0
        if after is not None:
            if not after.isdigit():
                raise errors.InvalidCursor()
            start = int(after)
    found = _reacted(call, user_id, None if paged else start + limit + 1)
    items = [{"type": "message", "channel": channel.id,
              "message": {**message.to_dict(), "permalink": call.replica.permalink(channel, message)}}
             for channel, message in found[start:start + limit]]
    body: dict[str, Any] = {"ok": True, "items": items}
    if paged:
        body["paging"] = {"count": per_page, "total": len(found), "page": page,
                          "pages": max(1, -(-len(found) // per_page))}
    else:
        more = len(found) > start + limit
        body["response_metadata"] = {"next_cursor": encode_cursor("item", str(start + limit)) if more else ""}
    return body


def _reacted(call: Call, user_id: str, enough: int | None) -> list[tuple[Channel, Message]]:
    """Messages ``user_id`` has a reaction on, newest reaction first (a seeded reaction counts
    as made when its message was posted); stops once it has ``enough``."""
    state, history = call.state, call.replica.history
    when: dict[tuple[str, int], float] = {}
    refs = {ref for ref, uid in history.ids.users.items() if uid == user_id}
    if refs:
        plan = history.plan
        channel_of = {id(h): cid for cid, h in history.channels.items()}
        for position, emoji in plan.reactions.items():
            if any(refs.intersection(users) for _, users in emoji):
                cid = channel_of.get(id(plan.channels[plan.channel[position]]))
                if cid is not None:
                    when[(cid, plan.key[position])] = plan.key[position] / 1e6
    when.update(state.reacted.of(user_id))
    found: list[tuple[Channel, Message]] = []
    for (cid, key), _ in sorted(when.items(), key=lambda item: item[1], reverse=True):
        channel = state.channels.get(cid)
        if channel is None or not call.can_see(channel):
            continue
        message = channel.by_key.get(key)
        if message is None or not any(user_id in users for users in message.reactions.values()):
            continue  # deleted, or the reaction was taken back
        found.append((channel, message))
        if enough is not None and len(found) >= enough:
            break
    return found


def _item(call: Call, reading: bool = False) -> tuple[Channel, Message]:
    p = call.params
    channel_arg = p.get_str("channel")
    ts = p.get_str("timestamp")
    if p.has("file") or p.has("file_comment"):
        raise errors.InvalidArguments("[ERROR] file reactions are not supported by this replica")
    if not channel_arg or not ts:
        raise errors.NoItemSpecified()
    if ts_key(ts.strip()) is None:
        raise errors.BadTimestamp()
    channel = call.readable_channel() if reading else call.find_channel(channel_arg)
    if not reading and call.caller.is_bot and call.caller.user_id not in channel.member_set:
        raise errors.NotInChannel()
    return channel, call.message_in(channel, ts, errors.MessageNotFound)


def _name(call: Call) -> str:
    name = (call.params.get_str("name") or "").strip().strip(":").lower()
    if not _NAME.fullmatch(name):
        raise errors.InvalidName()
    return name


ROUTES: dict[str, Handler] = {
    "reactions.add": reactions_add,
    "reactions.remove": reactions_remove,
    "reactions.get": reactions_get,
    "reactions.list": reactions_list,
}

PARTIAL: dict[str, str] = {
    "reactions.add": "messages only (no files or file comments)",
    "reactions.remove": "messages only (no files or file comments)",
    "reactions.get": "messages only (no files or file comments); full is ignored",
    "reactions.list": "messages only (no files or file comments); full is ignored",
}
"""What each method here still lacks (the coverage ledger's ``partial`` notes)."""
