"""The PagerDuty snapshot (``/state``, ``world.json``) and what the judge sees of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ancha.world.tools.pagerduty.replica import PagerDutyReplica

NOTE_CHARS = 1000


def snapshot(replica: PagerDutyReplica) -> dict[str, Any]:
    base = replica.base_url
    state = replica.state
    incidents = []
    for incident in state.created:
        item = incident.to_dict(base)
        item.update({"ref": incident.ref, "seeded": incident.seeded, "actor": incident.actor,
                     "fault": incident.fault, "escalation_level": incident.escalation_level,
                     "first_acknowledged_at": incident.first_acknowledged_at,
                     "first_resolved_at": incident.first_resolved_at,
                     "assignee_names": [u.name for u in incident.assignees],
                     "notes": [{**n.to_dict(base), "seeded": n.seeded, "actor": n.actor} for n in incident.notes]})
        incidents.append(item)
    return {
        "agent": {"id": replica.agent.id, "ref": replica.agent.ref, "email": replica.agent.email},
        "users": [{**u.to_dict(base), "ref": u.ref, "person": u.person} for u in state.users.values()],
        "services": [{**s.to_dict(base), "ref": s.ref} for s in state.services.values()],
        "escalation_policies": [{"id": p.id, "name": p.name, "ref": p.ref} for p in state.policies.values()],
        "schedules": [{"id": s.id, "name": s.name, "ref": s.ref} for s in state.schedules.values()],
        "incidents": incidents,
    }


def judge_view(pagerduty: dict[str, Any]) -> str | None:
    """Incidents touched during the attempt (or still open): status, assignees, notes."""
    shown = [i for i in pagerduty.get("incidents") or [] if isinstance(i, dict) and
             (not i.get("seeded") or i.get("status") != "resolved" or i.get("first_resolved_at"))]
    lines = ["PagerDuty incidents (final state):"]
    for incident in shown[-50:]:
        service = (incident.get("service") or {}).get("summary", "?")
        names = ", ".join(incident.get("assignee_names") or []) or "nobody"
        lines.append(f"- #{incident.get('incident_number')} {incident.get('title')!r} on {service}: "
                     f"{incident.get('status')}, urgency {incident.get('urgency')}, assigned to {names}")
        for note in incident.get("notes") or []:
            author = (note.get("user") or {}).get("summary", "?")
            lines.append(f"    note by {author}: {str(note.get('content') or '')[:NOTE_CHARS]}")
    if not shown:
        lines.append("(none)")
    return "\n".join(lines)
