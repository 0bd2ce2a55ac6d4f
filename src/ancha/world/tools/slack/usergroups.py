"""User groups (Slack's "subteams"): named sets of people with an @handle, and default channels.

A disabled group keeps its name, handle and members (``date_delete`` is set); enabling it
brings it back as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Usergroup:
    id: str
    team_id: str
    name: str
    handle: str
    description: str
    created_by: str
    date_create: int
    channels: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    updated_by: str = ""
    date_update: int = 0
    date_delete: int = 0
    deleted_by: str | None = None

    @property
    def disabled(self) -> bool:
        return self.date_delete != 0

    def to_dict(self, *, include_users: bool = False, include_count: bool = False) -> dict[str, Any]:
        """Slack's usergroup object; ``users`` and ``user_count`` when asked for."""
        d: dict[str, Any] = {
            "id": self.id, "team_id": self.team_id, "is_usergroup": True, "is_subteam": True,
            "name": self.name, "description": self.description, "handle": self.handle, "is_external": False,
            "date_create": self.date_create, "date_update": self.date_update, "date_delete": self.date_delete,
            "auto_type": None, "auto_provision": False, "enterprise_subteam_id": "",
            "created_by": self.created_by, "updated_by": self.updated_by or self.created_by,
            "deleted_by": self.deleted_by, "prefs": {"channels": list(self.channels), "groups": []},
        }
        if include_users:
            d["users"] = list(self.users)
        if include_count:
            d["user_count"] = len(self.users)
        return d


class Usergroups:
    """The workspace's user groups, in the order they were created."""

    __slots__ = ("by_id",)

    def __init__(self) -> None:
        self.by_id: dict[str, Usergroup] = {}

    def get(self, group_id: str) -> Usergroup | None:
        return self.by_id.get(group_id)

    def add(self, group: Usergroup) -> None:
        self.by_id[group.id] = group

    def named(self, name: str, other_than: str | None = None) -> Usergroup | None:
        """The group called ``name`` (case-insensitive), other than ``other_than``."""
        folded = name.casefold()
        return next((g for g in self.by_id.values() if g.name.casefold() == folded and g.id != other_than), None)

    def handled(self, handle: str, other_than: str | None = None) -> Usergroup | None:
        """The group whose @handle is ``handle``, other than ``other_than``."""
        return next((g for g in self.by_id.values() if g.handle == handle and g.id != other_than), None)

    def to_list(self) -> list[dict[str, Any]]:
        """Every group with its members, for ``world.json``."""
        return [g.to_dict(include_users=True, include_count=True) for g in self.by_id.values()]
