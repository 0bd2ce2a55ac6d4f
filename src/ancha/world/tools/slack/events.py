"""What Slack tells others about a change: domain events on the bus, Events API payloads.

Domain events (``message_posted``, ``message_changed``, ``message_deleted``,
``reaction_added``, ``reaction_removed``, ``member_joined_channel``,
``member_left_channel``) carry plain data
for people, rules and predicates. The ``*_event`` builders give the exact events Slack's
Events API sends an app (the shapes of ``events-api-samples/MessagePayload.json`` and
``AppMentionPayload.json``), for delivery in the wrapper of ``event_callback.py``.
"""

from __future__ import annotations

import re
from typing import Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.tools.slack.models import Channel, Message

TOOL = "slack"
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


def mentions(text: str) -> list[str]:
    """User ids mentioned as ``<@U123>`` (or ``<@U123|name>``), in order, without repeats."""
    return list(dict.fromkeys(_MENTION.findall(text)))


def message_posted(message: Message, channel: Channel) -> DomainEvent:
    return DomainEvent("message_posted", TOOL, message.key / 1e6, {
        "channel": channel.id, "ts": message.ts, "user": message.user, "text": message.text,
        "thread_ts": message.thread_ts if message.is_reply else None, "actor": message.actor,
        "channel_type": channel.channel_type, "subtype": message.subtype, "bot_id": message.bot_id,
        "mentions": mentions(message.text),
    })


def message_changed(message: Message, channel: Channel, previous: dict[str, Any], actor: str,
                    at: float) -> DomainEvent:
    return DomainEvent("message_changed", TOOL, at, {
        "channel": channel.id, "ts": message.ts, "user": message.user, "text": message.text,
        "previous_text": previous.get("text", ""), "thread_ts": message.thread_ts, "actor": actor,
        "channel_type": channel.channel_type,
    })


def message_deleted(message: Message, channel: Channel, actor: str, at: float) -> DomainEvent:
    return DomainEvent("message_deleted", TOOL, at, {
        "channel": channel.id, "ts": message.ts, "user": message.user, "text": message.text,
        "thread_ts": message.thread_ts, "actor": actor, "channel_type": channel.channel_type,
    })


def reaction(added: bool, message: Message, channel: Channel, name: str, user: str, actor: str,
             at: float) -> DomainEvent:
    return DomainEvent("reaction_added" if added else "reaction_removed", TOOL, at, {
        "channel": channel.id, "ts": message.ts, "reaction": name, "user": user,
        "item_user": message.user, "actor": actor,
    })


def member_joined_channel(channel: Channel, user: str, actor: str, at: float) -> DomainEvent:
    return DomainEvent("member_joined_channel", TOOL, at, {
        "channel": channel.id, "user": user, "actor": actor, "channel_type": channel.channel_type,
    })


def member_left_channel(channel: Channel, user: str, actor: str, at: float) -> DomainEvent:
    return DomainEvent("member_left_channel", TOOL, at, {
        "channel": channel.id, "user": user, "actor": actor, "channel_type": channel.channel_type,
    })


# --- Events API payloads -------------------------------------------------------------


def message_event(message: Message, channel: Channel) -> dict[str, Any]:
    """The ``event`` of a ``message`` event_callback (``message.channels``, ``.im``, ...)."""
    event: dict[str, Any] = {"type": "message"}
    if message.subtype:
        event["subtype"] = message.subtype
    event.update(message.to_dict())
    event["type"] = "message"
    event.pop("reactions", None)
    event["channel"] = channel.id
    event["event_ts"] = message.ts
    event["channel_type"] = channel.channel_type
    return event


def app_mention_event(message: Message, channel: Channel) -> dict[str, Any]:
    """The ``event`` of an ``app_mention`` event_callback."""
    event: dict[str, Any] = {"type": "app_mention", "user": message.user, "text": message.text,
                             "ts": message.ts, "team": message.team, "channel": channel.id,
                             "event_ts": message.ts}
    if message.bot_id:
        event["bot_id"] = message.bot_id
        event["app_id"] = message.app_id
        event["bot_profile"] = message.bot_profile
    if message.blocks is not None:
        event["blocks"] = message.blocks
    if message.thread_ts is not None:
        event["thread_ts"] = message.thread_ts
    return event
