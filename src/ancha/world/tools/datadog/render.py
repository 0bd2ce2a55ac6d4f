"""How the console's world diff shows Datadog: a downtime with its scope (marked when it covers
all monitors), a monitor's state and its transitions, an event; the log and metric counters
as bookkeeping."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ancha.world.kernel.rendered import Field, ObjectChange, Rendered, changed, dig, field, fields, shown

ALL_MONITORS = "covers all monitors"
NO_END = "never ends"
BOOKKEEPING_SECTIONS = frozenset({"logs", "metrics"})
"""What the world counts as it runs (log lines added, metric points): no one's change."""
MONITOR_BOOKKEEPING = frozenset({"modified", "overall_state_modified"})


def render(change: ObjectChange) -> Rendered | None:
    if change.collection in BOOKKEEPING_SECTIONS:
        return Rendered("object", change.collection, bookkeeping=True)
    if not isinstance(change.current, Mapping):
        return None
    if change.collection == "downtimes":
        return _downtime(change)
    if change.collection == "monitors":
        return _monitor(change)
    if change.collection == "events":
        return _event(change)
    return None


def covers_all_monitors(identifier: Any) -> bool:
    """A downtime's ``monitor_identifier`` that mutes every monitor: ``monitor_tags: ["*"]``, or
    no monitor and no tags."""
    if not isinstance(identifier, Mapping):
        return True
    if identifier.get("monitor_id") is not None:
        return False
    tags = identifier.get("monitor_tags")
    return not tags or "*" in tags


def _downtime(change: ObjectChange) -> Rendered:
    downtime: Mapping[str, Any] = change.current
    found = downtime.get("attributes")
    attributes: Mapping[str, Any] = found if isinstance(found, Mapping) else downtime
    identifier = attributes.get("monitor_identifier")
    planned = attributes.get("schedule")
    schedule: Mapping[str, Any] = planned if isinstance(planned, Mapping) else {}
    flags = [ALL_MONITORS] if covers_all_monitors(identifier) else []
    end = schedule.get("end") if "end" in schedule else dig(schedule, "current_downtime.end")
    if end is None and not schedule.get("recurrences"):
        flags.append(NO_END)
    return Rendered(
        "downtime", f"downtime {str(downtime.get('id'))[:8]}",
        fields(Field("mutes", _muted(change, identifier)),
               Field("scope", shown(attributes.get("scope"))) if attributes.get("scope") not in (None, "*") else None,
               field(change, "status", "attributes.status"),
               Field("from", change.when(schedule.get("start"))) if schedule.get("start") else None,
               Field("until", change.when(end) if end else "no end"),
               field(change, "canceled", "attributes.canceled", change.when),
               _actor(downtime)),
        body=str(attributes.get("message") or ""),
        flags=tuple(flags),
        bookkeeping=change.only_changed(frozenset({"modified"})),
    )


def _muted(change: ObjectChange, identifier: Any) -> str:
    if covers_all_monitors(identifier):
        return "all monitors"
    if isinstance(identifier, Mapping) and identifier.get("monitor_id") is not None:
        ident = identifier["monitor_id"]
        monitors = (change.snapshot or {}).get("monitors")
        found = next((m for m in monitors or [] if isinstance(m, Mapping) and m.get("id") == ident), None)
        return f"monitor {found.get('name')!r} ({ident})" if found else f"monitor {ident}"
    tags = identifier.get("monitor_tags") if isinstance(identifier, Mapping) else None
    return "monitors tagged " + shown(tags)


def _monitor(change: ObjectChange) -> Rendered:
    monitor: Mapping[str, Any] = change.current
    old = {repr(t) for t in dig(change.before, "transitions") or []} if change.kind == "changed" else set()
    transitions = [Field(f"at {change.when(t.get('at'))}", f"{t.get('from')} → {t.get('to')}"
                         + (f" ({t.get('cause')})" if t.get("cause") else ""))
                   for t in dig(change.after, "transitions") or [] if isinstance(t, Mapping) and repr(t) not in old]
    return Rendered(
        "monitor", f"monitor {monitor.get('name')!r} ({monitor.get('id')})",
        fields(field(change, "state", "overall_state"), field(change, "query", "query"),
               changed(change, "muted", "options.silenced", lambda v: "no" if not v else shown(v)), *transitions),
        bookkeeping=change.only_changed(MONITOR_BOOKKEEPING),
    )


def _event(change: ObjectChange) -> Rendered:
    event: Mapping[str, Any] = change.current
    return Rendered(
        "object", f"event {event.get('title') or event.get('id')}",
        fields(Field("at", change.when(event.get("date_happened"))), field(change, "type", "alert_type"),
               field(change, "source", "source_type_name"), field(change, "tags", "tags"),
               _actor(event)),
        body=str(event.get("text") or ""),
    )


def _actor(item: Mapping[str, Any]) -> Field | None:
    actor = str(item.get("actor") or "")
    if not actor:
        return None
    return Field("by", {"agent": "the agent", "world": "the world (its rules and faults)"}.get(actor, actor))
