"""One account's PagerDuty state, with the indexes its reads need.

Incidents are kept in creation order (``created``, with ``keys`` for bisecting a time
window). A filtered list (statuses, services, assignees, urgencies) is built once per
filter and kept until any incident changes (``version``), so paging through a large
account costs one pass for the first page and a slice for each next one.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from ancha.world.tools.pagerduty.models.records import (
    EscalationPolicy,
    Incident,
    LogEntry,
    MaintenanceWindow,
    Priority,
    Schedule,
    Service,
    Team,
    User,
)

Filter = tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], str | None]
"""(statuses, service ids, user ids, urgencies, incident_key); empty sets filter nothing."""
MAX_CACHED_FILTERS = 64
"""Filtered lists kept between incident changes (an agent polls a few; a flood of distinct
filters starts the cache over instead of growing it)."""


class PagerDutyState:
    def __init__(self) -> None:
        self.users: dict[str, User] = {}
        self.users_by_email: dict[str, User] = {}
        self.schedules: dict[str, Schedule] = {}
        self.policies: dict[str, EscalationPolicy] = {}
        self.services: dict[str, Service] = {}
        self.services_by_key: dict[str, Service] = {}
        self.priorities: dict[str, Priority] = {}
        self.teams: dict[str, Team] = {}
        self.maintenance_windows: dict[str, MaintenanceWindow] = {}
        self.incidents: dict[str, Incident] = {}
        self.by_number: dict[int, Incident] = {}
        self.created: list[Incident] = []
        """Every incident, oldest first."""
        self.keys: list[tuple[float, int]] = []
        """(created_at, number) of ``created``, for bisecting."""
        self.log_entries: dict[str, LogEntry] = {}
        self.log_order: list[LogEntry] = []
        self.open_by_key: dict[tuple[str, str], Incident] = {}
        """(service id, incident_key) -> the open incident with that dedup key."""
        self.version = 0
        self._filtered: dict[Filter, tuple[list[Incident], list[tuple[float, int]]]] = {}
        self._filtered_version = 0
        self.next_number = 1

    # --- writes -------------------------------------------------------------------------

    def add_user(self, user: User) -> None:
        self.users[user.id] = user
        self.users_by_email[user.email.lower()] = user

    def add_service(self, service: Service) -> None:
        self.services[service.id] = service
        self.services_by_key[service.integration_key] = service
        service.policy.services.append(service)

    def add_incident(self, incident: Incident) -> None:
        self.incidents[incident.id] = incident
        self.by_number[incident.number] = incident
        self.next_number = max(self.next_number, incident.number + 1)
        key = (incident.created_at, incident.number)
        if not self.keys or key > self.keys[-1]:
            self.keys.append(key)
            self.created.append(incident)
        else:  # a seed dated later than an incident made after it
            at = bisect.bisect(self.keys, key)
            self.keys.insert(at, key)
            self.created.insert(at, incident)
        if incident.status != "resolved":
            incident.service.open[incident.status] += 1
            self.open_by_key[(incident.service.id, incident.incident_key)] = incident
        last = incident.service.last_incident_at
        incident.service.last_incident_at = max(last or incident.created_at, incident.created_at)
        self.changed()

    def set_status(self, incident: Incident, status: str) -> None:
        """Move ``incident`` to ``status``, keeping the services' open counts and dedup index."""
        before = incident.status
        if before == status:
            return
        if before != "resolved":
            incident.service.open[before] -= 1
        if status != "resolved":
            incident.service.open[status] += 1
            self.open_by_key[(incident.service.id, incident.incident_key)] = incident
        elif self.open_by_key.get((incident.service.id, incident.incident_key)) is incident:
            del self.open_by_key[(incident.service.id, incident.incident_key)]
        incident.status = status
        self.changed()

    def add_log_entry(self, entry: LogEntry) -> None:
        self.log_entries[entry.id] = entry
        self.log_order.append(entry)
        entry.incident.log_entries.append(entry)

    def changed(self) -> None:
        """Some incident changed: cached filtered lists are stale."""
        self.version += 1

    # --- reads --------------------------------------------------------------------------

    def in_maintenance(self, service: Service, at: float) -> bool:
        """Whether an ongoing maintenance window covers ``service`` at ``at``."""
        return any(w.ongoing(at) and service in w.services for w in self.maintenance_windows.values())

    def user_by_email(self, email: str) -> User | None:
        return self.users_by_email.get(email.strip().lower())

    def filtered(self, what: Filter) -> tuple[list[Incident], list[tuple[float, int]]]:
        """The incidents matching ``what`` oldest first, and their (created_at, number) keys;
        cached until an incident changes."""
        statuses, services, users, urgencies, key = what
        if not (statuses or services or users or urgencies or key):
            return self.created, self.keys
        if self._filtered_version != self.version:
            self._filtered.clear()
            self._filtered_version = self.version
        cached = self._filtered.get(what)
        if cached is None:
            if len(self._filtered) >= MAX_CACHED_FILTERS:  # many distinct filters: keep memory flat
                self._filtered.clear()
            found = [i for i in self.created if (not statuses or i.status in statuses)
                     and (not services or i.service.id in services)
                     and (not urgencies or i.urgency in urgencies)
                     and (key is None or i.incident_key == key)
                     and (not users or any(u.id in users for u, _ in i.assignments))]
            cached = self._filtered[what] = (found, [(i.created_at, i.number) for i in found])
        return cached

    @staticmethod
    def window(keys: list[tuple[float, int]], since: float | None, until: float | None) -> tuple[int, int]:
        """The index range of incidents (by their sorted ``keys``) created in ``[since, until)``."""
        low = 0 if since is None else bisect.bisect_left(keys, (since, -1))
        high = len(keys) if until is None else bisect.bisect_left(keys, (until, -1))
        return low, max(low, high)


_URGENCY = {"low": 0, "high": 1}
SORT_KEYS: dict[str, Callable[[Incident], Any]] = {
    "incident_number": lambda i: i.number,
    "resolved_at": lambda i: (i.resolved_at is None, i.resolved_at or 0.0, i.number),
    "urgency": lambda i: (_URGENCY.get(i.urgency, 0), i.number),
}
