"""What the judge sees of Datadog: every monitor with its final state and transitions, the
downtimes (with their status), and the events posted during the attempt."""

from __future__ import annotations

from typing import Any

TEXT_CHARS = 500


def judge_view(snapshot: dict[str, Any]) -> str:
    lines = ["Datadog monitors (final state):"]
    monitors = [m for m in snapshot.get("monitors") or [] if isinstance(m, dict)]
    for monitor in monitors:
        moves = ", ".join(f"{t.get('from')} -> {t.get('to')}" for t in monitor.get("transitions") or [])
        deleted = " [deleted]" if monitor.get("deleted") else ""
        lines.append(f"- {monitor.get('name')} ({monitor.get('id')}): {monitor.get('overall_state')}{deleted}; "
                     f"query {monitor.get('query')}" + (f"; transitions: {moves}" if moves else ""))
    if not monitors:
        lines.append("(none)")
    lines.append("Datadog downtimes:")
    downtimes = [d for d in snapshot.get("downtimes") or [] if isinstance(d, dict)]
    for downtime in downtimes:
        attributes = downtime.get("attributes") or {}
        schedule = attributes.get("schedule") or {}
        who = "seeded" if downtime.get("seeded") else f"created by {downtime.get('actor')}"
        lines.append(f"- {attributes.get('status')}, {who}, on {attributes.get('monitor_identifier')}, "
                     f"scope {attributes.get('scope')}, from {schedule.get('start')} to {schedule.get('end')}"
                     + (f": {str(attributes.get('message'))[:TEXT_CHARS]}" if attributes.get("message") else ""))
    if not downtimes:
        lines.append("(none)")
    posted = [e for e in snapshot.get("events") or [] if isinstance(e, dict) and e.get("actor") == "agent"]
    lines.append("Datadog events posted during the attempt:")
    lines += [f"- {e.get('title')}: {str(e.get('text') or '')[:TEXT_CHARS]}" for e in posted] or ["(none)"]
    return "\n".join(lines)
