"""Who reacted to what during the trial, for reactions.list.

Seeded reactions are found from the scene's history plan; reactions added during the
trial are noted here as they happen, so listing a person's reactions reads the messages
they reacted to and never scans a conversation's history.
"""

from __future__ import annotations


class Reacted:
    """Per user, the messages (channel id, ts key) they added a reaction to, with when."""

    __slots__ = ("_by_user",)

    def __init__(self) -> None:
        self._by_user: dict[str, dict[tuple[str, int], float]] = {}

    def note(self, user_id: str, channel_id: str, key: int, at: float) -> None:
        """``user_id`` reacted to the message at ``at``: it moves to the front of their list."""
        items = self._by_user.setdefault(user_id, {})
        items.pop((channel_id, key), None)
        items[(channel_id, key)] = at

    def of(self, user_id: str) -> dict[tuple[str, int], float]:
        """The messages ``user_id`` reacted to during the trial, with the latest reaction's time."""
        return self._by_user.get(user_id, {})
