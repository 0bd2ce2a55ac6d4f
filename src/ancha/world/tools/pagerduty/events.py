"""PagerDuty's domain events, and the v3 webhook payloads they become.

Every event's data: ``incident`` (id), ``service`` (id), ``actor`` (trace actor),
``user`` (the acting user's id, or None for the integration/the policy), ``status``
(the incident's status after the change), plus per type:

- ``incident_triggered``: ``fault`` (the fault ref whose effect triggered it, or None);
- ``incident_escalated``: ``level``, ``assignees``; ``incident_reassigned``: ``assignees``;
- ``incident_annotated``: ``note``, ``content``; ``notification_sent``: ``notified``, ``level``;
- ``incident_updated``: ``changed``; ``incident_merged``: ``sources``; ``incident_snoozed``: ``until``.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from ancha.world.tools.pagerduty.models import iso, rendered

if TYPE_CHECKING:
    from ancha.world.kernel.bus import DomainEvent
    from ancha.world.tools.pagerduty.models import Incident
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

EVENT_TYPES = frozenset({
    "incident_triggered", "incident_acknowledged", "incident_resolved", "incident_escalated",
    "incident_reassigned", "incident_annotated", "incident_updated", "incident_priority_updated",
    "incident_merged", "incident_snoozed", "incident_unacknowledged", "notification_sent",
})
STATE_EVENTS = frozenset(EVENT_TYPES - {"notification_sent"})
"""What can change an incident as a check sees it."""

WEBHOOK_TYPES = {
    "incident_triggered": "incident.triggered", "incident_acknowledged": "incident.acknowledged",
    "incident_resolved": "incident.resolved", "incident_escalated": "incident.escalated",
    "incident_reassigned": "incident.reassigned", "incident_annotated": "incident.annotated",
    "incident_priority_updated": "incident.priority_updated", "incident_unacknowledged": "incident.unacknowledged",
}
"""Domain event -> v3 webhook ``event_type`` (the others send no webhook)."""


def incident_data(incident: Incident, base: str) -> dict[str, Any]:
    """An ``incident`` webhook data object (webhooks-v3 "Event Data Types")."""
    return {
        "id": incident.id, "type": "incident", "self": f"{base}/incidents/{incident.id}",
        "html_url": incident.to_dict(base)["html_url"], "number": incident.number, "status": incident.status,
        "incident_key": incident.incident_key, "created_at": iso(incident.created_at), "title": incident.title,
        "incident_type": {"name": "incident_default"}, "service": incident.service.reference(base),
        "assignees": [u.reference(base) for u in incident.assignees],
        "escalation_policy": incident.policy.reference(base), "teams": [],
        "priority": incident.priority.reference(base) if incident.priority else None,
        "urgency": incident.urgency, "conference_bridge": None, "resolve_reason": rendered(incident.resolve_reason, base),
    }


def webhook(replica: PagerDutyReplica, event: DomainEvent) -> dict[str, Any] | None:
    """The v3 webhook body PagerDuty sends for ``event``, or None when it sends none."""
    event_type = WEBHOOK_TYPES.get(event.type)
    incident = replica.state.incidents.get(str(event.data.get("incident")))
    if event_type is None or incident is None:
        return None
    base = replica.base_url
    user = replica.state.users.get(str(event.data.get("user")))
    agent = user.reference(base) if user is not None else (
        incident.service.reference(base) if event.type == "incident_triggered" else None)
    data: dict[str, Any] = incident_data(incident, base)
    if event.type == "incident_annotated":
        data = {"incident": incident.reference(base), "id": event.data.get("note"),
                "content": event.data.get("content"), "trimmed": False, "type": "incident_note"}
    seed = f"{replica.world.id}:{event.type}:{incident.id}:{event.at}"
    return {"event": {
        "id": str(uuid.uuid5(uuid.NAMESPACE_URL, seed)), "event_type": event_type, "resource_type": "incident",
        "occurred_at": _millis(event.at), "agent": agent,
        "client": {"name": "PagerDuty"} if user is None else None, "data": data}}


def _millis(at: float) -> str:
    whole = iso(at) or ""
    return f"{whole[:-1]}.{int((at % 1) * 1000):03d}Z"
