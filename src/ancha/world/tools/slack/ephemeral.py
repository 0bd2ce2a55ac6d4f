"""Ephemeral messages (``chat.postEphemeral``): seen by one user, kept by nobody.

Slack shows an ephemeral message to its one recipient and stores it nowhere: it is in no
conversation's history, no ``world.json`` channel and no message event. The replica
keeps each one here, in the order sent, so that ``world.json``'s ``ephemeral_messages``
(and the trace, which has the call) show what the agent told whom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EphemeralMessage:
    channel: str
    ts: str
    """``message_ts`` of the answer."""
    user: str
    """Who wrote it."""
    recipient: str
    """The one user who sees it."""
    actor: str
    text: str
    thread_ts: str | None = None
    blocks: list[Any] | None = None
    attachments: list[Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``world.json``'s record of it."""
        record: dict[str, Any] = {"channel": self.channel, "ts": self.ts, "user": self.user,
                                  "recipient": self.recipient, "actor": self.actor, "text": self.text}
        if self.thread_ts is not None:
            record["thread_ts"] = self.thread_ts
        if self.blocks is not None:
            record["blocks"] = self.blocks
        if self.attachments is not None:
            record["attachments"] = self.attachments
        return record
