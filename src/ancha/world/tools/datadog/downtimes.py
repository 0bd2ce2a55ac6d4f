"""Downtimes (v2): which monitors they silence and when, in simulated time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ancha.world.tools.datadog.monitors import Monitor
from ancha.world.tools.datadog.wire import iso_micro


@dataclass(slots=True)
class Downtime:
    id: str
    scope: str
    start: float
    end: float | None
    created: float
    modified: float
    monitor_id: int | None = None
    monitor_tags: list[str] = field(default_factory=list)
    message: str = ""
    canceled: float | None = None
    display_timezone: str = "UTC"
    mute_first_recovery_notification: bool = False
    notify_end_states: list[str] = field(default_factory=lambda: ["alert", "no data", "warn"])
    notify_end_types: list[str] = field(default_factory=lambda: ["canceled", "expired"])
    creator: dict[str, Any] | None = None
    seeded: bool = False
    actor: str = "seed"

    def status(self, now: float) -> str:
        if self.canceled is not None:
            return "canceled"
        if now < self.start:
            return "scheduled"
        if self.end is not None and now >= self.end:
            return "ended"
        return "active"

    def active(self, now: float) -> bool:
        return self.status(now) == "active"

    @property
    def all_monitors(self) -> bool:
        return self.monitor_id is None and "*" in self.monitor_tags

    def targets(self, monitor: Monitor) -> bool:
        if self.monitor_id is not None:
            return self.monitor_id == monitor.id
        if not self.monitor_tags:
            return False
        return all(tag == "*" or tag in monitor.tags for tag in self.monitor_tags)

    def identifier(self) -> dict[str, Any]:
        if self.monitor_id is not None:
            return {"monitor_id": self.monitor_id}
        return {"monitor_tags": list(self.monitor_tags)}

    def to_dict(self, now: float) -> dict[str, Any]:
        schedule = {"start": iso_micro(self.start), "end": iso_micro(self.end) if self.end is not None else None}
        monitor = {"data": {"id": str(self.monitor_id), "type": "monitors"} if self.monitor_id is not None else None}
        return {
            "id": self.id, "type": "downtime",
            "attributes": {
                "canceled": iso_micro(self.canceled) if self.canceled is not None else None,
                "created": iso_micro(self.created), "modified": iso_micro(self.modified),
                "display_timezone": self.display_timezone, "message": self.message or None,
                "monitor_identifier": self.identifier(),
                "mute_first_recovery_notification": self.mute_first_recovery_notification,
                "notify_end_states": list(self.notify_end_states), "notify_end_types": list(self.notify_end_types),
                "schedule": schedule, "scope": self.scope, "status": self.status(now),
            },
            "relationships": {"created_by": {"data": None}, "monitor": monitor},
        }

    def match(self, now: float) -> dict[str, Any]:
        """A ``downtime_match`` of ``GET /api/v2/monitor/{id}/downtime_matches``."""
        return {"id": self.id, "type": "downtime_match",
                "attributes": {"start": iso_micro(self.start), "end": iso_micro(self.end) if self.end else None,
                               "groups": ["*"], "scope": self.scope}}
