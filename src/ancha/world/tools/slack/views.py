"""Views: modals the app opens for a person and the Home tab it publishes to them.

A modal is opened with a trigger id, which Slack hands an app inside an interaction
payload (a button click, a shortcut, a slash command) and which can be exchanged once,
within 3 seconds. ``ViewStore.issue_trigger`` mints one the way an interaction would;
``views.open`` and ``views.push`` exchange it. A modal and the views pushed on it form a
stack (at most ``MAX_STACK`` deep); each person has at most one Home tab view.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

TRIGGER_TTL_S = 3.0
MAX_STACK = 3
"""Views in one modal stack: the root and two pushed on it, as in Slack."""


@dataclass(slots=True)
class Trigger:
    user: str
    issued: float
    """Simulated time it was issued."""
    exchanged: bool = False


class View:
    """One view: ``payload`` is what the app sent (title, blocks, callback_id, ...)."""

    __slots__ = ("id", "team_id", "user", "type", "payload", "hash", "root_view_id", "previous_view_id",
                 "app_id", "bot_id")

    def __init__(self, id: str, team_id: str, user: str, payload: dict[str, Any], hash: str, *,
                 app_id: str | None, bot_id: str | None, root_view_id: str | None = None,
                 previous_view_id: str | None = None) -> None:
        self.id = id
        self.team_id = team_id
        self.user = user
        self.type = str(payload.get("type"))
        self.payload = payload
        self.hash = hash
        self.root_view_id = root_view_id or id
        self.previous_view_id = previous_view_id
        self.app_id = app_id
        self.bot_id = bot_id

    @property
    def external_id(self) -> str:
        return str(self.payload.get("external_id") or "")

    def to_dict(self) -> dict[str, Any]:
        """Slack's view object (views.open, views.update, views.push, views.publish)."""
        p = self.payload
        d: dict[str, Any] = {
            "id": self.id, "team_id": self.team_id, "type": self.type, "blocks": p.get("blocks", []),
            "private_metadata": p.get("private_metadata", ""), "callback_id": p.get("callback_id", ""),
            "state": {"values": {}}, "hash": self.hash,
        }
        for name in ("title", "close", "submit"):
            if p.get(name) is not None:
                d[name] = p[name]
        d.update({
            "clear_on_close": bool(p.get("clear_on_close", False)),
            "notify_on_close": bool(p.get("notify_on_close", False)),
            "previous_view_id": self.previous_view_id, "root_view_id": self.root_view_id,
            "app_id": self.app_id, "external_id": self.external_id, "app_installed_team_id": self.team_id,
            "bot_id": self.bot_id,
        })
        if self.type == "modal":
            d["submit_disabled"] = bool(p.get("submit_disabled", False))
        return d


class ViewStore:
    """The workspace's views, the trigger ids issued to people, their Home tabs and modal stacks."""

    def __init__(self) -> None:
        self.views: dict[str, View] = {}
        self.triggers: dict[str, Trigger] = {}
        self.home: dict[str, str] = {}
        """User id -> the id of their Home tab view."""
        self.stacks: dict[str, list[str]] = {}
        """Root view id -> the ids of its stack, root first."""
        self.open_root: dict[str, str] = {}
        """User id -> the root of the modal stack they have open."""

    def issue_trigger(self, user_id: str, now: float) -> str:
        """A trigger id for ``user_id``, as an interaction payload carries one."""
        trigger_id = f"{int(now)}.{secrets.randbelow(9 * 10 ** 11) + 10 ** 11}.{secrets.token_hex(16)}"
        self.triggers[trigger_id] = Trigger(user_id, now)
        return trigger_id

    def by_external_id(self, external_id: str) -> View | None:
        return next((v for v in self.views.values() if external_id and v.external_id == external_id), None)

    def add(self, view: View) -> None:
        self.views[view.id] = view
        if view.type == "home":
            self.home[view.user] = view.id
        elif view.root_view_id == view.id:
            self.stacks[view.id] = [view.id]
            self.open_root[view.user] = view.id
        else:
            self.stacks[view.root_view_id].append(view.id)

    def snapshot(self) -> list[dict[str, Any]]:
        """Every view as ``world.json`` lists it: who it is for, and Slack's object."""
        return [{"user": v.user, **v.to_dict()} for v in self.views.values()]
