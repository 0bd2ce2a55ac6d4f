"""Calls (``calls.*``): voice and video calls held in another service (Zoom, Meet...),
which an app registers in Slack so that a ``call`` block can show them in a conversation.

A Call has Slack's ``R`` id, the provider's ``external_unique_id`` and join URLs, and its
participants: Slack users (``slack_id``) or the provider's own (``external_id`` with a
``display_name`` and ``avatar_url``). ``calls.end`` stamps its duration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ThirdPartyCall:
    id: str
    external_unique_id: str
    join_url: str
    date_start: int
    created_by: str
    title: str | None = None
    desktop_app_join_url: str | None = None
    external_display_id: str | None = None
    users: list[dict[str, str]] = field(default_factory=list)
    date_end: int | None = None
    duration: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Slack's call object."""
        d: dict[str, Any] = {
            "id": self.id,
            "date_start": self.date_start,
            "external_unique_id": self.external_unique_id,
            "join_url": self.join_url,
        }
        for name in ("desktop_app_join_url", "external_display_id", "title"):
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        d["users"] = [dict(user) for user in self.users]
        if self.date_end is not None:
            d["date_end"] = self.date_end
        if self.duration is not None:
            d["duration"] = self.duration
        return d

    def add_users(self, users: list[dict[str, str]]) -> None:
        for user in users:
            if _key(user) not in {_key(u) for u in self.users}:
                self.users.append(user)

    def remove_users(self, users: list[dict[str, str]]) -> None:
        gone = {_key(user) for user in users}
        self.users = [u for u in self.users if _key(u) not in gone]


def _key(user: dict[str, str]) -> tuple[str, str]:
    return ("slack", user["slack_id"]) if "slack_id" in user else ("external", user.get("external_id", ""))
