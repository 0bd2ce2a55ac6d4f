"""Pinned messages: which messages of each conversation are pinned, by whom and when.

A pin names its message by key; deleting the message unpins it (Slack drops the pin
with the message), so reads skip a pin whose message is gone instead of every delete
having to know about pins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ancha.world.kernel.bus import DomainEvent

if TYPE_CHECKING:
    from ancha.world.tools.slack.models import Channel


@dataclass(frozen=True, slots=True)
class Pin:
    channel: str
    key: int
    """The pinned message's ts, in microseconds."""
    ts: str
    created: int
    """When it was pinned (epoch seconds)."""
    created_by: str

    def to_dict(self) -> dict[str, Any]:
        """``world.json``'s record of the pin."""
        return {"channel": self.channel, "ts": self.ts, "created": self.created,
                "created_by": self.created_by}


class Pins:
    """Every conversation's pins, in the order they were pinned."""

    __slots__ = ("_by_channel",)

    def __init__(self) -> None:
        self._by_channel: dict[str, dict[int, Pin]] = {}

    def get(self, channel: Channel, key: int) -> Pin | None:
        pin = self._by_channel.get(channel.id, {}).get(key)
        return pin if pin is not None and key in channel.by_key else None

    def add(self, pin: Pin) -> None:
        self._by_channel.setdefault(pin.channel, {})[pin.key] = pin

    def remove(self, channel_id: str, key: int) -> None:
        self._by_channel.get(channel_id, {}).pop(key, None)

    def in_channel(self, channel: Channel) -> list[Pin]:
        """The conversation's pins whose message still stands, newest pin first."""
        pins = self._by_channel.get(channel.id)
        if not pins:
            return []
        return [pin for pin in reversed(pins.values()) if pin.key in channel.by_key]

    def count(self, channel: Channel) -> int:
        """How many of the conversation's messages are pinned (``pin_count``)."""
        return len(self.in_channel(channel))

    def to_list(self, channels: dict[str, Channel]) -> list[dict[str, Any]]:
        """Every standing pin, for ``world.json``."""
        return [pin.to_dict() for cid in self._by_channel if cid in channels
                for pin in reversed(self.in_channel(channels[cid]))]


def pin_event(added: bool, pin: Pin, user: str, actor: str, at: float) -> DomainEvent:
    """``pin_added`` / ``pin_removed`` on the bus: which message, by whom."""
    return DomainEvent("pin_added" if added else "pin_removed", "slack", at,
                       {"channel": pin.channel, "ts": pin.ts, "user": user, "actor": actor})
