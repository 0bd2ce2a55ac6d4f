"""The messages Slack itself writes in a channel's history when the channel changes.

Joining, leaving, a new topic, purpose or name, archiving and unarchiving each leave a
message with a ``subtype`` in the channel's history, written as the user concerned (the
one who joined, or who set the topic), with the fields Slack's Events API samples give
that subtype (``inviter``, ``topic``, ``purpose``, ``name``/``old_name``). The texts are
those of Slack's message-subtype reference pages, with today's mention form ``<@U123>``.

They are messages like any other: in ``conversations.history``, in ``world.json``, and
published as ``message_posted`` (with their subtype). They do not reach people
(``reach.py``): nobody answers "has joined the channel".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.tools.slack.call import Caller
from ancha.world.tools.slack.models import Channel, Message

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

SUBTYPES = frozenset({"channel_join", "channel_leave", "channel_topic", "channel_purpose", "channel_name",
                      "channel_archive", "channel_unarchive"})
"""The subtypes of the messages Slack writes about the channel itself."""


def text_of(subtype: str, user: str, fields: dict[str, Any]) -> str:
    who = f"<@{user}>"
    if subtype == "channel_join":
        return f"{who} has joined the channel"
    if subtype == "channel_leave":
        return f"{who} has left the channel"
    if subtype == "channel_topic":
        topic = fields["topic"]
        return f"{who} set the channel topic: {topic}" if topic else f"{who} cleared the channel topic"
    if subtype == "channel_purpose":
        purpose = fields["purpose"]
        return f"{who} set the channel purpose: {purpose}" if purpose else f"{who} cleared the channel purpose"
    if subtype == "channel_name":
        return f'{who} has renamed the channel from "{fields["old_name"]}" to "{fields["name"]}"'
    if subtype == "channel_archive":
        return f"{who} archived the channel"
    if subtype == "channel_unarchive":
        return f"{who} un-archived the channel"
    raise ValueError(f"{subtype!r} is not a channel event subtype")


def write(replica: SlackReplica, channel: Channel, user: str, actor: str, subtype: str,
          **fields: Any) -> Message:
    """Write the ``subtype`` message about ``user`` in ``channel`` (``actor`` caused it) and
    publish it as any message is."""
    is_bot = replica.state.users[user].is_bot if user in replica.state.users else False
    message = replica.new_message(channel, Caller(user, actor, is_bot), text_of(subtype, user, fields))
    message.subtype = subtype
    kept = {name: value for name, value in fields.items() if value is not None}
    if kept:
        message.fields = kept
    replica.post(message, channel, None)
    return message
