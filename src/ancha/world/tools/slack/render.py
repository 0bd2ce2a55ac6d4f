"""How the console's world diff shows Slack: a message as a message (author, channel, thread,
its whole text), a channel by its name; a thread's counters as bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.kernel.rendered import Field, ObjectChange, Rendered, field, fields, shown

MESSAGE_LISTS = ("messages", "scheduled_messages", "ephemeral_messages")
THREAD_BOOKKEEPING = frozenset({"reply_count", "reply_users", "reply_users_count", "latest_reply", "subscribed",
                                "is_locked", "last_read", "thread_ts", "edited"})
"""What a message's thread keeps track of as replies arrive: no one wrote it."""


def render(change: ObjectChange) -> Rendered | None:
    top = change.collection.split(".", 1)[0]
    if top in MESSAGE_LISTS and isinstance(change.current, Mapping):
        return _message(change, top)
    if top == "channels" and isinstance(change.current, Mapping):
        return _channel(change)
    return None


def _message(change: ObjectChange, kind: str) -> Rendered:
    message: Mapping[str, Any] = change.current
    snapshot = change.snapshot or {}
    channel = _channel_name(snapshot, str(message.get("channel") or change.collection.partition(".")[2]))
    title = {"messages": "message", "scheduled_messages": "scheduled message",
             "ephemeral_messages": "ephemeral message"}[kind] + f" in {channel}"
    thread_ts, ts = message.get("thread_ts"), message.get("ts")
    thread = None
    if thread_ts and thread_ts != ts:
        thread = Field("thread", f"reply to the message of {change.when(thread_ts)}")
    elif message.get("reply_count"):
        thread = Field("thread", f"{message.get('reply_count')} repl{'y' if message.get('reply_count') == 1 else 'ies'}")
    when = message.get("post_at") or ts
    return Rendered(
        "message", title,
        fields(Field("from", _author(snapshot, message)), Field("at", change.when(when)) if when else None, thread,
               field(change, "reactions", "reactions", _reactions),
               field(change, "deleted", "deleted")),
        body=str(message.get("text") or ""),
        bookkeeping=change.only_changed(THREAD_BOOKKEEPING),
    )


def _channel(change: ObjectChange) -> Rendered:
    channel: Mapping[str, Any] = change.current
    return Rendered(
        "object", f"channel #{channel.get('name')}",
        fields(field(change, "topic", "topic.value"), field(change, "purpose", "purpose.value"),
               field(change, "archived", "is_archived"), field(change, "members", "members")),
        bookkeeping=change.only_changed(frozenset({"updated", "last_read", "unread_count"})),
    )


def _author(snapshot: Mapping[str, Any], message: Mapping[str, Any]) -> str:
    actor = str(message.get("actor") or "")
    bot = message.get("bot_profile")
    name = bot.get("name") if isinstance(bot, Mapping) else None
    if not name:
        user = _find(snapshot.get("users"), str(message.get("user") or ""))
        name = (user.get("real_name") or user.get("name")) if user else message.get("user") or message.get("username")
    who = shown(name)
    if actor == "agent":
        return f"{who} (the agent)"
    if actor.startswith("person:"):
        return f"{who} ({actor.removeprefix('person:')}, a person of the scene)"
    return who


def _channel_name(snapshot: Mapping[str, Any], channel_id: str) -> str:
    channel = _find(snapshot.get("channels"), channel_id)
    if channel is None:
        return channel_id or "a conversation"
    if channel.get("is_im"):
        user = _find(snapshot.get("users"), str(channel.get("user") or ""))
        return f"a direct message with {(user or {}).get('real_name') or channel.get('user')}"
    return f"#{channel.get('name')}"


def _find(items: Any, ident: str) -> Mapping[str, Any] | None:
    if not ident or not isinstance(items, list):
        return None
    return next((i for i in items if isinstance(i, Mapping) and i.get("id") == ident), None)


def _reactions(value: Any) -> str:
    if not isinstance(value, list) or not value:
        return "—"
    return ", ".join(f":{r.get('name')}: ×{r.get('count', 1)}" for r in value if isinstance(r, Mapping))
