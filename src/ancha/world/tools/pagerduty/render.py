"""How the console's world diff shows PagerDuty: an incident with its status, who acknowledged
it and when it was resolved; a service's incident timestamp as bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.kernel.rendered import Field, ObjectChange, Rendered, field, fields

SERVICE_BOOKKEEPING = frozenset({"last_incident_timestamp", "updated_at"})
INCIDENT_BOOKKEEPING = frozenset({"updated_at", "alert_counts", "pending_actions"})


def render(change: ObjectChange) -> Rendered | None:
    if not isinstance(change.current, Mapping):
        return None
    if change.collection == "incidents":
        return _incident(change)
    if change.collection == "services":
        service: Mapping[str, Any] = change.current
        return Rendered("object", f"service {service.get('name') or service.get('summary')}",
                        fields(field(change, "status", "status")),
                        bookkeeping=change.only_changed(SERVICE_BOOKKEEPING))
    return None


def _incident(change: ObjectChange) -> Rendered:
    incident: Mapping[str, Any] = change.current
    acks = [Field("acknowledged", f"by {_summary(a.get('acknowledger'))} at {change.when(a.get('at'))}")
            for a in incident.get("acknowledgements") or [] if isinstance(a, Mapping)]
    assigned = ", ".join(_summary(a.get("assignee")) for a in incident.get("assignments") or []
                         if isinstance(a, Mapping))
    return Rendered(
        "incident", f"incident #{incident.get('incident_number')}: {incident.get('title')}",
        fields(field(change, "status", "status"), field(change, "urgency", "urgency"),
               field(change, "priority", "priority.summary"), Field("service", _summary(incident.get("service"))),
               Field("triggered", change.when(incident.get("created_at"))) if incident.get("created_at") else None,
               *acks, Field("assigned to", assigned) if assigned else None,
               field(change, "resolved", "resolved_at", change.when),
               field(change, "resolved by", "last_status_change_by.summary")
               if incident.get("status") == "resolved" else None),
        body=str(incident.get("description") or "") if incident.get("description") != incident.get("title") else "",
        bookkeeping=change.only_changed(INCIDENT_BOOKKEEPING),
    )


def _summary(ref: Any) -> str:
    return str(ref.get("summary") or ref.get("id")) if isinstance(ref, Mapping) else "—"
