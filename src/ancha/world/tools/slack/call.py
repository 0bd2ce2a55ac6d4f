"""One authenticated Web API call: who makes it, and what they may see and write.

Slack's visibility rules live here so every handler applies them alike: a private
conversation the caller is not in does not exist for them (``channel_not_found``);
a public one they are not in can be listed and inspected, but a bot must join it to
read or post (``not_in_channel``). People acting through user tokens join a public
channel when they post in it, so scene authors need not list every member.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ancha.world.tools.slack import errors
from ancha.world.tools.slack.models import Channel, Message, SlackState

if TYPE_CHECKING:
    from ancha.world.tools.slack.params import Params
    from ancha.world.tools.slack.replica import SlackReplica


@dataclass(frozen=True, slots=True)
class Caller:
    user_id: str
    actor: str
    """The trace actor: ``agent``, ``person:NAME`` or ``world``."""
    is_bot: bool


class Call:
    __slots__ = ("replica", "state", "params", "caller")

    def __init__(self, replica: SlackReplica, params: Params, caller: Caller) -> None:
        self.replica = replica
        self.state: SlackState = replica.state
        self.params = params
        self.caller = caller

    # --- conversations ------------------------------------------------------------------

    def find_channel(self, value: str | None, by_name: bool = False) -> Channel:
        """A conversation by id (or, where Slack allows it, ``#name``), if the caller can see it."""
        if not value:
            raise errors.ChannelNotFound()
        value = value.strip()
        channel = self.state.channels.get(value)
        if channel is None and by_name:
            channel = self.state.channel_named(value.removeprefix("#").lower())
        if channel is None or not self.can_see(channel):
            raise errors.ChannelNotFound()
        return channel

    def can_see(self, channel: Channel) -> bool:
        if channel.is_private or channel.is_im or channel.is_mpim:
            return self.caller.user_id in channel.member_set
        return True

    def readable_channel(self, name: str = "channel") -> Channel:
        channel = self.find_channel(self.params.get_str(name))
        if self.caller.is_bot and self.caller.user_id not in channel.member_set:
            raise errors.NotInChannel()
        return channel

    def writable_channel(self, value: str | None) -> Channel:
        if value and value[:1] in ("U", "W") and value in self.state.users:
            # chat.postMessage to a user id posts in the caller's DM with that user.
            return self.replica.open_dm([self.caller.user_id, value], creator=self.caller.user_id)
        channel = self.find_channel(value, by_name=True)
        if self.caller.user_id not in channel.member_set:
            if self.caller.is_bot:
                raise errors.NotInChannel()
            self.replica.join(channel, self.caller)
        if channel.is_archived:
            raise errors.IsArchived()
        return channel

    def message_in(self, channel: Channel, ts: str | None, missing: type[errors.SlackError]) -> Message:
        message = self.state.message(channel.id, ts.strip()) if ts else None
        if message is None:
            raise missing()
        return message

    # --- time ---------------------------------------------------------------------------

    def now_key(self) -> int:
        """Simulated now, in microseconds: strictly later than any earlier reading."""
        return round(self.replica.world.clock.now() * 1_000_000)


Handler = Callable[[Call], dict[str, Any]]
"""A Web API method: the call in, the ``ok: true`` body out (or a ``SlackError`` raised)."""
