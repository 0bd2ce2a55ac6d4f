"""Domain events the Datadog replica publishes on the environment's bus.

``DomainEvent(type, "datadog", at, data)``; every ``data`` holds ``actor`` (the trace actor
behind the change: ``agent``, ``world``, or ``clock`` for a change found while evaluating)
and, per type:

=========================  ==========================================================
type                       extra data
=========================  ==========================================================
monitor_state_changed      monitor (id), ref, from, to, cause (``fault:<ref>``,
                           ``action``, ``metric``, ``released``), notify (False while an
                           active downtime silences the monitor)
monitor_created            monitor, ref
monitor_updated            monitor, ref
monitor_deleted            monitor, ref
downtime_created           downtime (id), monitor (id or None), monitor_tags
downtime_updated           downtime, monitor, monitor_tags
downtime_canceled          downtime, monitor, monitor_tags
event_posted               event (id), title, tags
metric_submitted           metric (name), points (how many)
logs_submitted             count
=========================  ==========================================================

Seeding publishes nothing: the seed is the world as it was before the trial.
"""

from __future__ import annotations

from typing import Any

from ancha.world.kernel.bus import DomainEvent

EVENT_TYPES = (
    "monitor_state_changed", "monitor_created", "monitor_updated", "monitor_deleted", "downtime_created",
    "downtime_updated", "downtime_canceled", "event_posted", "metric_submitted", "logs_submitted",
)


def domain_event(type: str, at: float, actor: str, **data: Any) -> DomainEvent:
    if type not in EVENT_TYPES:
        raise ValueError(f"unknown Datadog domain event {type!r}")
    return DomainEvent(type, "datadog", at, {"actor": actor, **data})
