"""Channel bookmarks: the links a conversation keeps in its header, in the order added."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Bookmark:
    id: str
    channel_id: str
    title: str
    link: str
    emoji: str | None
    date_created: int
    last_updated_by_user_id: str
    last_updated_by_team_id: str
    rank: str
    date_updated: int = 0
    type: str = "link"
    entity_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Slack's bookmark object (bookmarks.add, .edit, .list)."""
        return {"id": self.id, "channel_id": self.channel_id, "title": self.title, "link": self.link,
                "emoji": self.emoji, "icon_url": None, "type": self.type, "entity_id": self.entity_id,
                "date_created": self.date_created, "date_updated": self.date_updated, "rank": self.rank,
                "last_updated_by_user_id": self.last_updated_by_user_id,
                "last_updated_by_team_id": self.last_updated_by_team_id, "shortcut_id": None, "app_id": None}


class Bookmarks:
    """Every conversation's bookmarks."""

    __slots__ = ("_by_channel",)

    def __init__(self) -> None:
        self._by_channel: dict[str, dict[str, Bookmark]] = {}

    def in_channel(self, channel_id: str) -> list[Bookmark]:
        return list(self._by_channel.get(channel_id, {}).values())

    def get(self, channel_id: str, bookmark_id: str) -> Bookmark | None:
        return self._by_channel.get(channel_id, {}).get(bookmark_id)

    def add(self, bookmark: Bookmark) -> None:
        self._by_channel.setdefault(bookmark.channel_id, {})[bookmark.id] = bookmark

    def remove(self, bookmark: Bookmark) -> None:
        self._by_channel.get(bookmark.channel_id, {}).pop(bookmark.id, None)

    def next_rank(self, channel_id: str) -> str:
        """Slack orders a conversation's bookmarks by ``rank``, a string that sorts after the last one."""
        ranks = [b.rank for b in self._by_channel.get(channel_id, {}).values()]
        return (max(ranks) + "g") if ranks else "g"

    def to_list(self) -> list[dict[str, Any]]:
        """Every bookmark, for ``world.json``."""
        return [b.to_dict() for marks in self._by_channel.values() for b in marks.values()]
