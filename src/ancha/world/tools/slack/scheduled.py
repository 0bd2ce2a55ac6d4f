"""Scheduled messages (``chat.scheduleMessage``): what waits to be posted, and when.

A scheduled message is not a message yet: it is in no history and no ``world.json``
channel, only in ``scheduled_messages`` until the simulated clock reaches its
``post_at``; then the environment's scheduler posts it as its author, as if they had
sent it then (``message_posted`` and all). Deleting it first cancels the post. One that
can no longer be posted by then (its channel archived, its author gone from the channel,
its thread parent deleted) is dropped, as Slack drops it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.kernel.scheduler import Due


@dataclass(slots=True)
class ScheduledMessage:
    id: str
    """``Q`` and 10 characters, as Slack's."""
    channel: str
    post_at: int
    date_created: int
    user: str
    actor: str
    text: str
    thread_ts: str | None = None
    reply_broadcast: bool = False
    blocks: list[Any] | None = None
    attachments: list[Any] | None = None
    metadata: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    due: Due | None = None

    def listed(self) -> dict[str, Any]:
        """One item of ``chat.scheduledMessages.list``."""
        return {"id": self.id, "channel_id": self.channel, "post_at": self.post_at,
                "date_created": self.date_created, "text": self.text}

    def to_dict(self) -> dict[str, Any]:
        """``world.json``'s record of it."""
        record = {**self.listed(), "user": self.user, "actor": self.actor}
        if self.thread_ts is not None:
            record["thread_ts"] = self.thread_ts
        return record


class ScheduledMessages:
    """The messages still waiting for their time, by id."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        self._by_id: dict[str, ScheduledMessage] = {}

    def add(self, message: ScheduledMessage) -> None:
        self._by_id[message.id] = message

    def get(self, scheduled_id: str) -> ScheduledMessage | None:
        return self._by_id.get(scheduled_id)

    def pop(self, scheduled_id: str) -> ScheduledMessage | None:
        return self._by_id.pop(scheduled_id, None)

    def of_user(self, user: str) -> list[ScheduledMessage]:
        """What ``user`` scheduled, the soonest first."""
        return sorted((m for m in self._by_id.values() if m.user == user), key=lambda m: (m.post_at, m.id))

    def all(self) -> list[ScheduledMessage]:
        return sorted(self._by_id.values(), key=lambda m: (m.post_at, m.id))
