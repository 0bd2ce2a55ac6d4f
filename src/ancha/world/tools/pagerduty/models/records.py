"""PagerDuty's records as plain classes with their wire shapes (``to_dict(base)``).

``base`` is the replica's public base URL: ``self`` links point at it, as PagerDuty's
point at api.pagerduty.com; ``html_url`` links point at the account's web app.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.kernel.scheduler import Due

WEB = "https://acme.pagerduty.com"
COLORS = ("purple", "red", "green", "blue", "orange", "teal", "brown", "cayenne")


def iso(at: float | None) -> str | None:
    """PagerDuty's timestamps: ISO 8601, UTC, whole seconds, ``Z``."""
    if at is None:
        return None
    return datetime.fromtimestamp(int(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def reference(kind: str, id: str, summary: str, base: str, path: str, web: str | None = None) -> dict[str, Any]:
    ref: dict[str, Any] = {"id": id, "type": f"{kind}_reference", "summary": summary, "self": f"{base}/{path}/{id}"}
    ref["html_url"] = f"{WEB}/{web or path}/{id}"
    return ref


@dataclass(slots=True)
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

    def reference(self, base: str) -> dict[str, Any]:
        return reference("user", self.id, self.name, base, "users")

    def to_dict(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id, "type": "user", "summary": self.name, "self": f"{base}/users/{self.id}",
            "html_url": f"{WEB}/users/{self.id}", "name": self.name, "email": self.email,
            "time_zone": self.time_zone, "color": self.color, "role": self.role,
            "avatar_url": f"https://secure.gravatar.com/avatar/{self.id.lower()}.png?d=mm&r=PG",
            "description": self.description, "invitation_sent": False, "job_title": "",
            "teams": [], "contact_methods": [], "notification_rules": [], "coordinated_incidents": [],
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
class Schedule:
    id: str
    name: str
    layers: list[Layer]
    time_zone: str = "Etc/UTC"
    description: str = ""
    ref: str | None = None

    def on_call(self, at: float) -> tuple[User, float, float] | None:
        """The final schedule at ``at``: the last layer with someone on call wins."""
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

    @property
    def status(self) -> str:
        if self.open["triggered"]:
            return "critical"
        return "warning" if self.open["acknowledged"] else "active"

    def reference(self, base: str) -> dict[str, Any]:
        return reference("service", self.id, self.name, base, "services", "service-directory")

    def to_dict(self, base: str) -> dict[str, Any]:
        return {
            "id": self.id, "type": "service", "summary": self.name, "self": f"{base}/services/{self.id}",
            "html_url": f"{WEB}/service-directory/{self.id}", "name": self.name, "description": self.description,
            "auto_resolve_timeout": 14400, "acknowledgement_timeout": 1800, "created_at": iso(self.created_at),
            "status": self.status, "last_incident_timestamp": iso(self.last_incident_at),
            "escalation_policy": self.policy.reference(base), "response_play": None, "teams": [],
            "integrations": [{"id": self.integration_id, "type": "events_api_v2_inbound_integration_reference",
                              "summary": "Events API v2",
                              "self": f"{base}/services/{self.id}/integrations/{self.integration_id}",
                              "html_url": f"{WEB}/services/{self.id}/integrations/{self.integration_id}"}],
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
    agent: dict[str, Any] | None
    """A reference (user, service) or None; resolved to the wire when read."""
    channel: dict[str, Any]
    summary: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self, base: str) -> dict[str, Any]:
        incident = self.incident
        body: dict[str, Any] = {
            "id": self.id, "type": self.type, "summary": self.summary,
            "self": f"{base}/log_entries/{self.id}",
            "html_url": f"{WEB}/incidents/{incident.id}/log_entries/{self.id}",
            "created_at": iso(self.created_at), "agent": self.agent, "channel": self.channel,
            "service": incident.service.reference(base), "incident": incident.reference(base),
            "teams": [], "contexts": [], "event_details": {"description": incident.title},
        }
        body.update(self.extra)
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
            "html_url": f"{WEB}/alerts/{self.id}", "created_at": iso(self.created_at), "status": self.status,
            "alert_key": self.alert_key, "service": incident.service.reference(base),
            "incident": incident.reference(base), "suppressed": False, "severity": self.severity,
            "integration": {"id": incident.service.integration_id,
                            "type": "events_api_v2_inbound_integration_reference", "summary": "Events API v2",
                            "self": f"{base}/services/{incident.service.id}/integrations/"
                                    f"{incident.service.integration_id}",
                            "html_url": f"{WEB}/services/{incident.service.id}/integrations/"
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
    last_status_change_by: dict[str, Any] | None = None
    resolved_at: float | None = None
    resolve_reason: dict[str, Any] | None = None
    escalation_level: int = 1
    loops: int = 0
    due: Due | None = None
    """The pending escalation (or snooze end)."""
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
            "html_url": f"{WEB}/incidents/{self.id}", "incident_number": self.number, "title": self.title,
            "description": self.title, "created_at": iso(self.created_at), "updated_at": iso(self.updated_at),
            "status": self.status, "incident_key": self.incident_key, "service": self.service.reference(base),
            "assignments": [{"at": iso(at), "assignee": user.reference(base)} for user, at in self.assignments],
            "assigned_via": self.assigned_via, "last_status_change_at": iso(self.last_status_change_at),
            "resolved_at": iso(self.resolved_at),
            "first_trigger_log_entry": {
                "id": first.id, "type": "trigger_log_entry_reference", "summary": first.summary,
                "self": f"{base}/log_entries/{first.id}",
                "html_url": f"{WEB}/incidents/{self.id}/log_entries/{first.id}"} if first else None,
            "alert_counts": counts, "is_mergeable": True, "incident_type": {"name": "incident_default"},
            "escalation_policy": self.policy.reference(base), "teams": [], "pending_actions": [],
            "acknowledgements": [{"at": iso(at), "acknowledger": user.reference(base) if user
                                  else self.service.reference(base)} for user, at in self.acknowledgements],
            "alert_grouping": None, "last_status_change_by": self.last_status_change_by,
            "priority": self.priority.reference(base) if self.priority else None,
            "resolve_reason": self.resolve_reason, "incidents_responders": [], "responder_requests": [],
            "urgency": self.urgency,
        }
