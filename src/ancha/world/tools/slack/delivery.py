"""What the agent hears from Slack: its events, in Slack's payloads, on the event feed (or,
with ``agent.slack_transport: socket``, over its Socket Mode connection: ``socket_mode.py``).

Every message written in a conversation the bot is a member of (channels it is
in, DMs and group DMs with it) becomes a ``message`` event, and one that mentions the
bot (``<@BOT>``) outside a DM also an ``app_mention`` event, as Slack sends both. The
payload is Slack's ``event_callback`` envelope. The agent's own messages are never
delivered: Slack sends an app its own bot messages, but a feed that echoed them would
start an endless loop for a ``per_event`` agent (each invocation's reply would invoke
it again), and an agent learns nothing from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent
from ancha.world.tools.slack import event_callback
from ancha.world.tools.slack import events as slack_events

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica


class SlackDelivery:
    service = "slack"

    def __init__(self, world: WorldPort, replica: SlackReplica) -> None:
        self.world = world
        self.replica = replica
        world.bus.subscribe("message_posted", self._on_message)

    def _on_message(self, event: DomainEvent) -> None:
        data = event.data
        bot = self.replica.bot
        if data["user"] == bot.id or data.get("actor") == "agent":
            return
        channel = self.replica.state.channels.get(data["channel"])
        message = self.replica.state.message(data["channel"], data["ts"])
        if channel is None or message is None or bot.id not in channel.member_set:
            return
        self._push("message", slack_events.message_event(message, channel), event.at)
        if bot.id in (data.get("mentions") or ()) and not (channel.is_im or channel.is_mpim):
            self._push("app_mention", slack_events.app_mention_event(message, channel), event.at)

    def _push(self, kind: str, inner: dict[str, Any], at: float) -> None:
        envelope = event_callback.wrap(self.replica, inner, at)
        if self.world.agent.get("slack_transport") == "socket":
            self.replica.socket_mode.push(envelope)  # over the agent's Socket Mode connection
            return
        self.world.feed.push({"service": self.service, "type": kind, "at": self.world.clock.isoformat(at),
                            "payload": envelope})


def start_delivery(replica: SlackReplica, world: WorldPort) -> None:
    """Subscribe the agent's event feed to this world's Slack."""
    SlackDelivery(world, replica)
