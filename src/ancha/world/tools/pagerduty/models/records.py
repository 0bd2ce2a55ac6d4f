"""PagerDuty's records as plain classes with their wire shapes (``to_dict(base)``).

``base`` is the replica's public base URL, as the caller reached it (scheme, host and
port): ``self`` links point at it, as PagerDuty's point at api.pagerduty.com, and so do
``html_url`` links (PagerDuty's point at the account's web app, which the replica does not
serve: each leads to the same record's REST path instead). Records keep the objects they
refer to, never rendered links, so every answer carries the base of the call it answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.kernel.scheduler import Due

COLORS = ("purple", "red", "green", "blue", "orange", "teal", "brown", "cayenne")


def iso(at: float | None) -> str | None:
    """PagerDuty's timestamps: ISO 8601, UTC, whole seconds, ``Z``."""
    if at is None:
        return None
    return datetime.fromtimestamp(int(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _whole(seconds: float | None) -> int | None:
    return None if seconds is None else int(seconds)


def reference(kind: str, id: str, summary: str, base: str, path: str) -> dict[str, Any]:
    url = f"{base}/{path}/{id}"
    return {"id": id, "type": f"{kind}_reference", "summary": summary, "self": url, "html_url": url}


def rendered(value: Any, base: str) -> Any:
    """``value`` with every record in it (anything with ``reference(base)``) as its wire
    reference: log entries and incidents keep records, and render them per answer."""
    if hasattr(value, "reference"):
        return value.reference(base)
    if isinstance(value, dict):
        return {k: rendered(v, base) for k, v in value.items()}
    if isinstance(value, list):
        return [rendered(v, base) for v in value]
    return value


@dataclass(slots=True, eq=False)
class Team:
    """A team: members with their team role, and the escalation policies it owns (whose
    services are then the team's)."""

    id: str
    name: str
    description: str = ""
    default_role: str = "manager"
    parent: Team | None = None
    members: list[tuple[User, str]] = field(default_factory=list)
    """(user, role), role one of observer, responder, manager."""
    ref: str | None = None

    def reference(self, base: str) -> dict[str, Any]:
        return reference("team", self.id, self.name, base, "teams")

    def to_dict(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "type": "team", "summary": self.name, "self": f"{base}/teams/{self.id}",
                "html_url": f"{base}/teams/{self.id}", "name": self.name, "description": self.description,
                "default_role": self.default_role,
                "parent": self.parent.reference(base) if self.parent is not None else None}


@dataclass(slots=True, eq=False)
class User:
    id: str
    name: str
    email: str
    role: str = "user"
    time_zone: str = "Etc/UTC"
    color: str = "purple"
    ref: str | None = None
    person: str | None = None
    description: str = ""
    teams: list[Team] = field(default_factory=list)

    def reference(self, base: str) -> dict[str, Any]:
        return reference("user", self.id, self.name, base, "users")

    def to_dict(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id, "type": "user", "summary": self.name, "self": f"{base}/users/{self.id}",
            "html_url": f"{base}/users/{self.id}", "name": self.name, "email": self.email,
            "time_zone": self.time_zone, "color": self.color, "role": self.role,
            "avatar_url": f"{base}/avatars/{self.id}.png",
            "description": self.description, "invitation_sent": False, "job_title": "",
            "teams": [t.reference(base) for t in self.teams], "contact_methods": [], "notification_rules": [], "coordinated_incidents": [],
        }


@dataclass(slots=True)
class Layer:
    id: str
    users: list[User]
    rotation: float
    start: float

    def on_call(self, at: float) -> tuple[User, float, float] | None:
        """Who this layer has on call at ``at``, and their shift's start and end."""
        if at < self.start or not self.users:
            return None
        turn = int((at - self.start) // self.rotation)
        begins = self.start + turn * self.rotation
        return self.users[turn % len(self.users)], begins, begins + self.rotation


@dataclass(slots=True)
class Override:
    """Someone on call in a schedule's place from ``start`` to ``end``, above every layer."""

    id: str
    user: User
    start: float
    end: float

    def to_dict(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "start": iso(self.start), "end": iso(self.end), "user": self.user.reference(base)}


@dataclass(slots=True)
class Schedule:
    id: str
    name: str
    layers: list[Layer]
    time_zone: str = "Etc/UTC"
    description: str = ""
    ref: str | None = None
    overrides: list[Override] = field(default_factory=list)
    """Oldest first; where two overlap the newer wins."""

    def override_at(self, at: float) -> Override | None:
        for override in reversed(self.overrides):
            if override.start <= at < override.end:
                return override
        return None

    def on_call(self, at: float) -> tuple[User, float, float] | None:
        """The final schedule at ``at``: an override if one covers it, else the last layer
        with someone on call."""
        override = self.override_at(at)
        if override is not None:
            return override.user, override.start, override.end
        for layer in reversed(self.layers):
            found = layer.on_call(at)
            if found is not None:
                return found
        return None

    def entries(self, since: float, until: float, limit: int = 500) -> list[tuple[User, float, float]]:
        """Final-schedule shifts overlapping ``[since, until)``, merged where one user continues."""
        found: list[tuple[User, float, float]] = []
        at = since
        while at < until and len(found) < limit:
            now = self.on_call(at)
            boundaries: list[float] = []
            for layer in self.layers:
                shift = layer.on_call(at)
                if shift is not None:
                    boundaries.append(shift[2])
                elif layer.start > at:
                    boundaries.append(layer.start)
            for override in self.overrides:
                if override.start > at:
                    boundaries.append(override.start)
                elif override.end > at:
                    boundaries.append(override.end)
            nxt = min(boundaries, default=until)
            if now is not None:
                user = now[0]
                if found and found[-1][0] is user and found[-1][2] >= at:
                    found[-1] = (user, found[-1][1], min(nxt, until))
                else:
                    found.append((user, at, min(nxt, until)))
            at = nxt if nxt > at else until
        return found

    def reference(self, base: str) -> dict[str, Any]:
        return reference("schedule", self.id, self.name, base, "schedules")


@dataclass(slots=True)
class Rule:
    id: str
    delay: float
    targets: list[User | Schedule]


@dataclass(slots=True)
class EscalationPolicy:
    id: str
    name: str
    rules: list[Rule]
    num_loops: int = 0
    description: str = ""
    ref: str | None = None
    services: list[Service] = field(default_factory=list)
    teams: list[Team] = field(default_factory=list)

    def reference(self, base: str) -> dict[str, Any]:
        return reference("escalation_policy", self.id, self.name, base, "escalation_policies")

    def users_at(self, level: int, at: float) -> list[User]:
        """Who rule ``level`` (1-based) pages at ``at``: its users, and its schedules' on-call users."""
        if not self.rules:
            return []
        rule = self.rules[(level - 1) % len(self.rules)]
        users: list[User] = []
        for target in rule.targets:
            user = target if isinstance(target, User) else (target.on_call(at) or (None,))[0]
            if user is not None and user not in users:
                users.append(user)
        return users


@dataclass(slots=True, eq=False)
class Service:
    id: str
    name: str
    policy: EscalationPolicy
    integration_key: str
    integration_id: str
    created_at: float
    description: str = ""
    ref: str | None = None
    open: dict[str, int] = field(default_factory=lambda: {"triggered": 0, "acknowledged": 0})
    last_incident_at: float | None = None
    acknowledgement_timeout: float | None = None
    """Seconds an acknowledged incident stays so before it is triggered again; None: never."""
    auto_resolve_timeout: float | None = None
    """Seconds an incident stays open before it is resolved; None: never."""

    @property
    def status(self) -> str:
        if self.open["triggered"]:
            return "critical"
        return "warning" if self.open["acknowledged"] else "active"

    def reference(self, base: str) -> dict[str, Any]:
        return reference("service", self.id, self.name, base, "services")

    def to_dict(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id, "type": "service", "summary": self.name, "self": f"{base}/services/{self.id}",
            "html_url": f"{base}/services/{self.id}", "name": self.name, "description": self.description,
            "auto_resolve_timeout": _whole(self.auto_resolve_timeout),
            "acknowledgement_timeout": _whole(self.acknowledgement_timeout), "created_at": iso(self.created_at),
            "status": self.status, "last_incident_timestamp": iso(self.last_incident_at),
            "escalation_policy": self.policy.reference(base), "response_play": None,
            "teams": [t.reference(base) for t in self.policy.teams],
            "integrations": [{"id": self.integration_id, "type": "events_api_v2_inbound_integration_reference",
                              "summary": "Events API v2",
                              "self": f"{base}/services/{self.id}/integrations/{self.integration_id}",
                              "html_url": f"{base}/services/{self.id}/integrations/{self.integration_id}"}],
            "incident_urgency_rule": {"type": "constant", "urgency": "high"}, "support_hours": None,
            "scheduled_actions": [], "addons": [], "alert_creation": "create_alerts_and_incidents",
            "alert_grouping_parameters": {"type": None, "config": None}, "alert_grouping": None,
            "alert_grouping_timeout": None, "auto_pause_notifications_parameters": {"enabled": False, "timeout": None},
        }


@dataclass(slots=True)
class Priority:
    id: str
    name: str
    description: str

    def reference(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "type": "priority_reference", "summary": self.name,
                "self": f"{base}/priorities/{self.id}", "html_url": None}

    def to_dict(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "type": "priority", "summary": self.name, "self": f"{base}/priorities/{self.id}",
                "html_url": None, "name": self.name, "description": self.description}


@dataclass(slots=True)
class Note:
    id: str
    content: str
    user: User | None
    created_at: float
    seeded: bool = False
    actor: str = "agent"

    def to_dict(self, base: str) -> dict[str, Any]:
        return {"id": self.id, "user": self.user.reference(base) if self.user else None,
                "channel": {"summary": "The PagerDuty website or APIs"}, "content": self.content,
                "created_at": iso(self.created_at)}


@dataclass(slots=True)
class LogEntry:
    id: str
    type: str
    incident: Incident
    created_at: float
    agent: User | Service | None
    """Who did it (a user, or the service for its integration); rendered when read."""
    channel: dict[str, Any]
    summary: str
    extra: dict[str, Any] = field(default_factory=dict)
    """More wire fields; records in them are rendered when read (``rendered``)."""

    def to_dict(self, base: str) -> dict[str, Any]:
        incident = self.incident
        body: dict[str, Any] = {
            "id": self.id, "type": self.type, "summary": self.summary,
            "self": f"{base}/log_entries/{self.id}",
            "html_url": f"{base}/log_entries/{self.id}",
            "created_at": iso(self.created_at), "agent": rendered(self.agent, base), "channel": self.channel,
            "service": incident.service.reference(base), "incident": incident.reference(base),
            "teams": [], "contexts": [], "event_details": {"description": incident.title},
        }
        body.update(rendered(self.extra, base))
        return body


@dataclass(slots=True)
class Alert:
    id: str
    incident: Incident
    created_at: float
    summary: str
    alert_key: str
    severity: str = "critical"
    status: str = "triggered"
    details: dict[str, Any] = field(default_factory=dict)
    source: str | None = None

    def to_dict(self, base: str) -> dict[str, Any]:
        incident = self.incident
        return {
            "id": self.id, "type": "alert", "summary": self.summary,
            "self": f"{base}/incidents/{incident.id}/alerts/{self.id}",
            "html_url": f"{base}/incidents/{incident.id}/alerts/{self.id}", "created_at": iso(self.created_at), "status": self.status,
            "alert_key": self.alert_key, "service": incident.service.reference(base),
            "incident": incident.reference(base), "suppressed": False, "severity": self.severity,
            "integration": {"id": incident.service.integration_id,
                            "type": "events_api_v2_inbound_integration_reference", "summary": "Events API v2",
                            "self": f"{base}/services/{incident.service.id}/integrations/"
                                    f"{incident.service.integration_id}",
                            "html_url": f"{base}/services/{incident.service.id}/integrations/"
                                        f"{incident.service.integration_id}"},
            "body": {"type": "alert_body", "contexts": [], "details": self.details,
                     "cef_details": {"source_origin": self.source, "severity": self.severity,
                                     "summary": self.summary, "details": self.details}},
            "first_trigger_log_entry": None,
        }


@dataclass(slots=True, eq=False)
class Incident:
    id: str
    number: int
    title: str
    service: Service
    policy: EscalationPolicy
    created_at: float
    incident_key: str
    urgency: str = "high"
    status: str = "triggered"
    ref: str | None = None
    seeded: bool = False
    fault: str | None = None
    """The fault whose effect triggered it."""
    actor: str = "agent"
    """Who created it (trace actor)."""
    assignments: list[tuple[User, float]] = field(default_factory=list)
    acknowledgements: list[tuple[User | None, float]] = field(default_factory=list)
    priority: Priority | None = None
    details: Any = None
    updated_at: float = 0.0
    last_status_change_at: float = 0.0
    last_status_change_by: User | Service | None = None
    resolved_at: float | None = None
    resolve_reason: dict[str, Any] | None = None
    """Wire shape, records in it rendered when read."""
    escalation_level: int = 1
    loops: int = 0
    due: Due | None = None
    """The pending escalation (or snooze end)."""
    timeout: Due | None = None
    """The pending acknowledgement timeout (the service's ``acknowledgement_timeout``)."""
    auto_resolve: Due | None = None
    """The pending auto-resolve (the service's ``auto_resolve_timeout``)."""
    first_acknowledged_at: float | None = None
    """The first acknowledgment made during the trial."""
    first_resolved_at: float | None = None
    notes: list[Note] = field(default_factory=list)
    log_entries: list[LogEntry] = field(default_factory=list)
    alerts: list[Alert] = field(default_factory=list)
    assigned_via: str = "escalation_policy"

    @property
    def assignees(self) -> list[User]:
        return [user for user, _ in self.assignments]

    @property
    def summary(self) -> str:
        return f"[#{self.number}] {self.title}"

    def reference(self, base: str) -> dict[str, Any]:
        return reference("incident", self.id, self.summary, base, "incidents")

    def to_dict(self, base: str) -> dict[str, Any]:
        first = self.log_entries[0] if self.log_entries else None
        counts = {"all": len(self.alerts), "triggered": sum(1 for a in self.alerts if a.status == "triggered")}
        counts["resolved"] = counts["all"] - counts["triggered"]
        return {
            "id": self.id, "type": "incident", "summary": self.summary, "self": f"{base}/incidents/{self.id}",
            "html_url": f"{base}/incidents/{self.id}", "incident_number": self.number, "title": self.title,
            "description": self.title, "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "status": self.status, "incident_key": self.incident_key, "service": self.service.reference(base),
            "assignments": [{"at": iso(at), "assignee": user.reference(base)} for user, at in self.assignments],
            "assigned_via": self.assigned_via, "last_status_change_at": iso(self.last_status_change_at),
            "resolved_at": iso(self.resolved_at),
            "first_trigger_log_entry": {
                "id": first.id, "type": "trigger_log_entry_reference", "summary": first.summary,
                "self": f"{base}/log_entries/{first.id}",
                "html_url": f"{base}/log_entries/{first.id}"} if first else None,
            "alert_counts": counts, "is_mergeable": True, "incident_type": {"name": "incident_default"},
            "escalation_policy": self.policy.reference(base),
            "teams": [t.reference(base) for t in self.policy.teams], "pending_actions": [],
            "acknowledgements": [{"at": iso(at), "acknowledger": user.reference(base) if user
                                  else self.service.reference(base)} for user, at in self.acknowledgements],
            "alert_grouping": None, "last_status_change_by": rendered(self.last_status_change_by, base),
            "priority": self.priority.reference(base) if self.priority else None,
            "resolve_reason": rendered(self.resolve_reason, base), "incidents_responders": [], "responder_requests": [],
            "urgency": self.urgency,
        }


@dataclass(slots=True, eq=False)
class MaintenanceWindow:
    """While it is on (``start`` <= now < ``end``) its services create no incidents from
    events and page nobody."""

    id: str
    number: int
    start: float
    end: float
    services: list[Service]
    description: str = ""
    created_by: User | None = None

    def ongoing(self, at: float) -> bool:
        return self.start <= at < self.end

    def reference(self, base: str) -> dict[str, Any]:
        return reference("maintenance_window", self.id, self.description or self.id, base, "maintenance_windows")

    def to_dict(self, base: str) -> dict[str, Any]:
        teams: list[Team] = []
        for service in self.services:
            teams.extend(t for t in service.policy.teams if t not in teams)
        return {"id": self.id, "type": "maintenance_window", "summary": self.description or self.id,
                "self": f"{base}/maintenance_windows/{self.id}", "html_url": f"{base}/maintenance_windows/{self.id}",
                "sequence_number": self.number, "start_time": iso(self.start), "end_time": iso(self.end),
                "description": self.description,
                "created_by": self.created_by.reference(base) if self.created_by is not None else None,
                "services": [s.reference(base) for s in self.services], "teams": [t.reference(base) for t in teams]}
