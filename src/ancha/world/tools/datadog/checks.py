"""Grading the Datadog state checks on the replica's state (usable as predicates too).

``datadog.monitor`` reads the monitor's current state (evaluated now); ``datadog.downtime``
looks for an active, uncanceled downtime that targets exactly that monitor, has at least
``remaining_gte`` left and lasts at most ``duration_lte`` in total; with
``reject_active_unsafe`` it also fails while any active downtime silences every monitor or
lasts longer than ``duration_lte`` (or has no end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ancha.durations import format_duration
from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.datadog.check_bodies import DowntimeCheck, MonitorCheck

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.datadog.downtimes import Downtime
    from ancha.world.tools.datadog.monitors import Monitor
    from ancha.world.tools.datadog.replica import DatadogReplica

MONITOR_EVENTS = frozenset({"monitor_state_changed", "monitor_deleted", "monitor_updated"})
DOWNTIME_EVENTS = frozenset({"downtime_created", "downtime_updated", "downtime_canceled", "monitor_deleted"})


def _outcome(passed: bool, expected: str, actual: str) -> StateOutcome:
    explanation = (f"Passed: expected {expected}, and found {actual}." if passed
                   else f"Failed: expected {expected}; actually {actual}.")
    return StateOutcome(passed, expected, actual, explanation, [])


def _named(monitor: Monitor) -> str:
    return f"monitor {monitor.name!r} ({monitor.id})"


def _clock(world: WorldPort, t: float) -> str:
    return world.clock.isoformat(t)


def monitor_state(body: dict[str, Any], replica: DatadogReplica, world: WorldPort) -> StateOutcome:
    spec = MonitorCheck.model_validate(body)
    expected = f"${spec.monitor} in state {spec.is_}"
    try:
        monitor_id = int(world.ref_id(spec.monitor, "monitor"))
    except (LookupError, ValueError) as exc:
        return _outcome(False, expected, str(exc))
    state = replica.state
    monitor = state.monitors.get(monitor_id)
    if monitor is None or monitor.deleted is not None:
        return _outcome(False, expected, f"${spec.monitor} ({monitor_id}) was deleted")
    state.evaluate(monitor)
    since = f"since {_clock(world, monitor.state_modified)}"
    if monitor.transitions:
        last = monitor.transitions[-1]
        since += f", after {last.from_}"
    return _outcome(monitor.state == spec.is_, expected, f"{_named(monitor)} is {monitor.state} ({since})")


def _describe(world: WorldPort, downtime: Downtime, now: float) -> str:
    target = (f"monitor {downtime.monitor_id}" if downtime.monitor_id is not None
              else "all monitors" if downtime.all_monitors else f"monitors tagged {', '.join(downtime.monitor_tags)}")
    if downtime.end is None:
        length = "with no end"
    else:
        length = (f"lasting {format_duration(downtime.end - downtime.start)}, "
                  f"{format_duration(max(0.0, downtime.end - now))} left")
    return f"downtime {downtime.id[:8]} on {target} ({downtime.status(now)}, {length})"


def downtime(body: dict[str, Any], replica: DatadogReplica, world: WorldPort) -> StateOutcome:
    spec = DowntimeCheck.model_validate(body)
    parts = [f"an active downtime on ${spec.monitor} alone"]
    if spec.remaining_gte is not None:
        parts.append(f"with at least {format_duration(spec.remaining_gte)} left")
    if spec.duration_lte is not None:
        parts.append(f"lasting at most {format_duration(spec.duration_lte)}")
    if spec.reject_active_unsafe:
        parts.append("and no active all-monitor or overlong downtime")
    expected = " ".join(parts)
    try:
        monitor_id = int(world.ref_id(spec.monitor, "monitor"))
    except (LookupError, ValueError) as exc:
        return _outcome(False, expected, str(exc))
    state = replica.state
    now = state.now()
    active = [d for d in state.downtimes.values() if d.active(now)]

    def overlong(d: Downtime) -> bool:
        return d.end is None if spec.duration_lte is None else (d.end is None or d.end - d.start > spec.duration_lte)

    if spec.reject_active_unsafe:
        unsafe = [d for d in active if d.all_monitors or overlong(d)]
        if unsafe:
            return _outcome(False, expected, "an unsafe downtime is active: " +
                            "; ".join(_describe(world, d, now) for d in unsafe))
    exact = [d for d in active if d.monitor_id == monitor_id]
    for candidate in exact:
        remaining_ok = spec.remaining_gte is None or candidate.end is None or \
            candidate.end - now >= spec.remaining_gte
        duration_ok = spec.duration_lte is None or (candidate.end is not None and
                                                    candidate.end - candidate.start <= spec.duration_lte)
        if remaining_ok and duration_ok:
            return _outcome(True, expected, _describe(world, candidate, now))
    if exact:
        return _outcome(False, expected, "; ".join(_describe(world, d, now) for d in exact))
    others = [d for d in state.downtimes.values() if d.monitor_id == monitor_id]
    if others:
        return _outcome(False, expected, "no active downtime on it; " +
                        "; ".join(_describe(world, d, now) for d in others))
    if active:
        return _outcome(False, expected, f"no downtime targets monitor {monitor_id} alone; active: " +
                        "; ".join(_describe(world, d, now) for d in active))
    return _outcome(False, expected, f"no downtime targets monitor {monitor_id}")
