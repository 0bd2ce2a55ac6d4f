"""What the console's timeline shows of PagerDuty: each incident's trigger, acknowledgements
and resolution."""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.spec import TimelineMark


def incident_marks(snapshot: dict[str, Any]) -> list[TimelineMark]:
    marks: list[TimelineMark] = []
    for incident in snapshot.get("incidents") or []:
        if not isinstance(incident, dict):
            continue
        name = f"incident #{incident.get('incident_number')} {incident.get('title', '')}".strip()
        if isinstance(incident.get("created_at"), str):
            marks.append(TimelineMark(incident["created_at"], f"{name} triggered ({incident.get('urgency')})",
                                      "alert"))
        for ack in incident.get("acknowledgements") or []:
            if isinstance(ack, dict) and isinstance(ack.get("at"), str):
                who = (ack.get("acknowledger") or {}).get("summary", "")
                marks.append(TimelineMark(ack["at"], f"{name} acknowledged by {who}", "warn"))
        if incident.get("status") == "resolved" and isinstance(incident.get("resolved_at"), str):
            marks.append(TimelineMark(incident["resolved_at"], f"{name} resolved", "ok"))
    return marks
