"""Downtimes (v2): which monitors they silence and when, in simulated time.

A downtime is one-time (``start``/``end``) or recurring: up to five RRULE recurrences, each
with a ``duration`` and a local ``start`` in the downtime's ``display_timezone``. A recurring
downtime is active while one of its occurrences runs, scheduled while one is still to come,
and ended after the last.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from dateutil import rrule as rrules

from ancha.world.tools.datadog.monitors import CREATOR, Monitor
from ancha.world.tools.datadog.wire import iso_micro

CREATOR_USER_ID = str(uuid.uuid5(uuid.NAMESPACE_DNS, str(CREATOR["email"])))
"""The org's user behind every call with the environment's keys (a downtime's ``created_by``)."""

_DURATION = re.compile(r"^(\d+)([mhdw])$")
_UNIT = {"m": 60, "h": 3600, "d": 86400, "w": 604800}
LOCAL_MINUTE = "%Y-%m-%dT%H:%M"
MAX_LOOKBACK = 10 * 365 * 86400
"""How far before now a recurrence may start (its occurrences are walked from the start)."""


def creator_user() -> dict[str, Any]:
    """The ``users`` item of a downtime's ``included``."""
    return {
        "type": "users",
        "id": CREATOR_USER_ID,
        "attributes": {
            "name": CREATOR["name"],
            "handle": CREATOR["handle"],
            "created_at": "2024-01-08T09:00:00.000000+00:00",
            "modified_at": "2024-01-08T09:00:00.000000+00:00",
            "email": CREATOR["email"],
            "title": None,
            "verified": True,
            "service_account": False,
            "disabled": False,
            "allowed_login_methods": [],
            "status": "Active",
        },
    }


def duration_seconds(text: str) -> int | None:
    """``2h`` (a recurrence's duration) as seconds; None when it is not ``<int>m|h|d|w``."""
    found = _DURATION.match(text)
    return int(found.group(1)) * _UNIT[found.group(2)] if found else None


@dataclass(slots=True)
class Recurrence:
    """One RRULE of a recurring downtime; ``start`` is local (``2026-03-02T09:00``)."""

    rrule: str
    duration: str
    start: str
    timezone: str = "UTC"
    _rule: Any = field(default=None, repr=False, compare=False)

    def rule(self) -> rrules.rrule:
        """The parsed RRULE, from ``start`` in ``timezone`` (parsed once; its occurrences are cached)."""
        if self._rule is None:
            local = datetime.strptime(self.start, LOCAL_MINUTE).replace(tzinfo=ZoneInfo(self.timezone))
            found = rrules.rrulestr(self.rrule, dtstart=local, forceset=False, cache=True)
            if not isinstance(found, rrules.rrule):
                raise ValueError("one RRULE expected")
            self._rule = found
        rule: rrules.rrule = self._rule
        return rule

    def problem(self, now: float) -> str | None:
        """Why the replica cannot take this recurrence (None when it can): a bad RRULE, a
        frequency below an hour, or a start so far back that walking its occurrences would hold
        the server."""
        try:
            rule = self.rule()
        except (ValueError, TypeError, KeyError) as exc:
            return f"Invalid rrule: {self.rrule} ({exc})"
        if rule._freq in (rrules.MINUTELY, rrules.SECONDLY):  # noqa: SLF001 - dateutil keeps FREQ there
            return "Invalid rrule: FREQ must be HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY"
        start = (
            datetime.strptime(self.start, LOCAL_MINUTE).replace(tzinfo=ZoneInfo(self.timezone)).timestamp()
        )
        limit = MAX_LOOKBACK if rule._freq != rrules.HOURLY else MAX_LOOKBACK / 10  # noqa: SLF001
        if start < now - limit:
            return (
                f"Invalid start: {self.start} is more than {int(limit // 86400 // 365)} years before now; "
                "start the recurrence closer to today"
            )
        return None

    @property
    def seconds(self) -> int:
        return duration_seconds(self.duration) or 0

    def around(self, now: float) -> tuple[tuple[float, float] | None, tuple[float, float] | None]:
        """The latest occurrence begun by ``now`` and the next one after it (epoch seconds)."""
        rule = self.rule()
        at = datetime.fromtimestamp(now, UTC)
        last, upcoming = rule.before(at, inc=True), rule.after(at)
        span = self.seconds
        return (
            (last.timestamp(), last.timestamp() + span) if last else None,
            (upcoming.timestamp(), upcoming.timestamp() + span) if upcoming else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"duration": self.duration, "rrule": self.rrule, "start": self.start}


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
    notify_end_types: list[str] = field(default_factory=lambda: ["expired"])
    creator: dict[str, Any] | None = None
    seeded: bool = False
    actor: str = "seed"
    recurrences: list[Recurrence] = field(default_factory=list)
    v1_scope: list[str] | None = None
    """The scope as a v1 list (``["env:prod", "host:a"]``) when the v1 API wrote it."""
    v1_recurrence: dict[str, Any] | None = None
    """A v1 ``recurrence`` as written (its RRULE form is in ``recurrences``)."""
    v1_timezone: str | None = None
    updated: bool = False

    @property
    def v1_id(self) -> int:
        """The integer id the v1 API knows the downtime by (derived from its uuid)."""
        return 1_000_000_000 + int(self.id.replace("-", "")[:8], 16) % 3_000_000_000

    def current(self, now: float) -> tuple[float, float | None] | None:
        """A recurring downtime's ongoing occurrence, else its next, else its last."""
        ongoing: tuple[float, float] | None = None
        upcoming: tuple[float, float] | None = None
        latest: tuple[float, float] | None = None
        for recurrence in self.recurrences:
            last, after = recurrence.around(now)
            if last is not None and now < last[1] and (ongoing is None or last[1] > ongoing[1]):
                ongoing = last
            if after is not None and (upcoming is None or after[0] < upcoming[0]):
                upcoming = after
            if last is not None and (latest is None or last[0] > latest[0]):
                latest = last
        return ongoing or upcoming or latest

    def status(self, now: float) -> str:
        if self.canceled is not None:
            return "canceled"
        if self.recurrences:
            occurrence = self.current(now)
            if occurrence is None:
                return "ended"
            if occurrence[0] <= now < (occurrence[1] or now + 1):
                return "active"
            return "scheduled" if occurrence[0] > now else "ended"
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

    def schedule(self, now: float) -> dict[str, Any]:
        if not self.recurrences:
            return {
                "start": iso_micro(self.start),
                "end": iso_micro(self.end) if self.end is not None else None,
            }
        occurrence = self.current(now)
        current = (
            {"start": iso_micro(occurrence[0]), "end": iso_micro(occurrence[1]) if occurrence[1] else None}
            if occurrence
            else {}
        )
        return {
            "current_downtime": current,
            "recurrences": [r.to_dict() for r in self.recurrences],
            "timezone": self.display_timezone,
        }

    def relationships(self) -> dict[str, Any]:
        monitor = {
            "data": {"id": str(self.monitor_id), "type": "monitors"} if self.monitor_id is not None else None
        }
        return {"created_by": {"data": {"type": "users", "id": CREATOR_USER_ID}}, "monitor": monitor}

    def to_dict(self, now: float, relationships: bool = True) -> dict[str, Any]:
        out = self._to_dict(now)
        if not relationships:
            out.pop("relationships")
        return out

    def _to_dict(self, now: float) -> dict[str, Any]:
        schedule = self.schedule(now)
        return {
            "id": self.id,
            "type": "downtime",
            "attributes": {
                "canceled": iso_micro(self.canceled) if self.canceled is not None else None,
                "created": iso_micro(self.created),
                "modified": iso_micro(self.modified),
                "display_timezone": self.display_timezone,
                "message": self.message or None,
                "monitor_identifier": self.identifier(),
                "mute_first_recovery_notification": self.mute_first_recovery_notification,
                "notify_end_states": list(self.notify_end_states),
                "notify_end_types": list(self.notify_end_types),
                "schedule": schedule,
                "scope": self.scope,
                "status": self.status(now),
            },
            "relationships": self.relationships(),
        }

    def match(self, now: float) -> dict[str, Any]:
        """A ``downtime_match`` of ``GET /api/v2/monitor/{id}/downtime_matches``."""
        start, end = self.start, self.end
        occurrence = self.current(now) if self.recurrences else None
        if occurrence is not None:
            start, end = occurrence
        return {
            "id": self.id,
            "type": "downtime_match",
            "attributes": {
                "start": iso_micro(start),
                "end": iso_micro(end) if end else None,
                "groups": ["*"],
                "scope": self.scope,
            },
        }
