"""Reminders people set for themselves (reminders.*): text, a time, and when they completed it."""

from __future__ import annotations

from typing import Any


class Reminder:
    __slots__ = ("id", "creator", "user", "text", "time", "complete_ts")

    def __init__(self, id: str, creator: str, user: str, text: str, time: int) -> None:
        self.id = id
        self.creator = creator
        self.user = user
        self.text = text
        self.time = time
        self.complete_ts = 0

    def to_dict(self) -> dict[str, Any]:
        """Slack's reminder object."""
        return {"id": self.id, "creator": self.creator, "user": self.user, "text": self.text,
                "recurring": False, "time": self.time, "complete_ts": self.complete_ts}


class Reminders:
    """The workspace's reminders by id, in the order they were added."""

    def __init__(self) -> None:
        self.by_id: dict[str, Reminder] = {}

    def add(self, reminder: Reminder) -> None:
        self.by_id[reminder.id] = reminder

    def of(self, user_id: str) -> list[Reminder]:
        """Reminders ``user_id`` set or is reminded by."""
        return [r for r in self.by_id.values() if user_id in (r.user, r.creator)]

    def to_list(self) -> list[dict[str, Any]]:
        return [r.to_dict() for r in self.by_id.values()]
