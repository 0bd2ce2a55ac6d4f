"""Grading the Datadog state checks on the replica's state (usable as predicates too).

``datadog.monitor`` reads the monitor's current state (evaluated now); ``datadog.downtime``
looks for an active, uncanceled downtime that targets exactly that monitor, has at least
``remaining_gte`` left and lasts at most ``duration_lte`` in total; with
``reject_active_unsafe`` it also fails while any active downtime silences every monitor or
lasts longer than ``duration_lte`` (or has no end).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ancha.durations import format_duration
from ancha.world.kernel.tool import StateOutcome
from ancha.world.tools.datadog.check_bodies import DowntimeCheck, MonitorCheck

if TYPE_CHECKING:
    from ancha.world.kernel.port import WorldPort
    from ancha.world.kernel.trace import TraceEntry
    from ancha.world.tools.datadog.downtimes import Downtime
    from ancha.world.tools.datadog.monitors import Monitor
    from ancha.world.tools.datadog.replica import DatadogReplica

MONITOR_EVENTS = frozenset({"monitor_state_changed", "monitor_deleted", "monitor_updated"})
DOWNTIME_EVENTS = frozenset({"downtime_created", "downtime_updated", "downtime_canceled", "monitor_deleted"})


WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _outcome(passed: bool, expected: str, actual: str, evidence: list[int] | None = None) -> StateOutcome:
    explanation = (f"Passed: expected {expected}, and found {actual}." if passed
                   else f"Failed: expected {expected}; actually {actual}.")
    return StateOutcome(passed, expected, actual, explanation, sorted(set(evidence or [])))


def _writes(world: WorldPort) -> list[TraceEntry]:
    """The Datadog calls that worked and changed something (by the agent, a world rule or a fault)."""
    return [e for e in world.trace if e.tool == "datadog" and e.worked and e.method in WRITES]


def _downtime_calls(world: WorldPort, downtimes: list[Downtime]) -> list[int]:
    """The calls that created these downtimes and changed or canceled them since, through
    either API: v2 names a downtime by its uuid, v1 by its integer id, in the path (an
    update, a cancel) or the answer (a create, a cancel by scope)."""
    if not downtimes:
        return []
    names = [d.id for d in downtimes] + [str(d.v1_id) for d in downtimes]
    in_path = re.compile(r"/downtime/(" + "|".join(re.escape(n) for n in names) + r")(/|$)")
    in_answer = re.compile(rb"(?<![\w-])(" + b"|".join(re.escape(n.encode()) for n in names) + rb")(?![\w-])")
    found = []
    for entry in _writes(world):
        if in_path.search(entry.path) or (
                "/downtime" in entry.path and entry.method == "POST" and in_answer.search(entry.response)):
            found.append(entry.seq)
    return found


def _monitor_calls(world: WorldPort, monitor: Monitor) -> list[int]:
    """The call behind the monitor's latest change of state: the call it happened during (a
    fault's or a world rule's state, its release, an update, a metric submission: calls are
    traced once answered, so it is the first traced at or after the change), else, for a
    change the clock made from the metric, the latest metric submission before it; none while
    the seed's state still holds."""
    if not monitor.transitions:
        return []
    last = monitor.transitions[-1]
    named = re.compile(rf"/monitor/{monitor.id}(/|$)")

    def made(entry: TraceEntry) -> bool:
        return entry.tool == "datadog" and entry.worked and entry.method in WRITES and (
            named.search(entry.path) is not None or "/series" in entry.path)

    after = next((e for e in world.trace if e.at >= last.at), None)
    if after is not None and made(after):
        return [after.seq]
    if last.cause != "metric":
        return []
    before = [e for e in world.trace if e.at <= last.at and made(e) and "/series" in e.path]
    return [before[-1].seq] if before else []


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
    return _outcome(monitor.state == spec.is_, expected, f"{_named(monitor)} is {monitor.state} ({since})",
                    _monitor_calls(world, monitor))


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
    parts = [f"an active downtime on ${spec.monitor} alone",
             f"with at least {format_duration(spec.remaining_gte)} left",
             f"lasting at most {format_duration(spec.duration_lte)}"]
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
        return d.end is None or d.end - d.start > spec.duration_lte

    def found(passed: bool, actual: str, downtimes: list[Downtime]) -> StateOutcome:
        return _outcome(passed, expected, actual, _downtime_calls(world, downtimes))

    if spec.reject_active_unsafe:
        unsafe = [d for d in active if d.all_monitors or overlong(d)]
        if unsafe:
            return found(False, "an unsafe downtime is active: " + "; ".join(_describe(world, d, now) for d in unsafe),
                         unsafe)
    exact = [d for d in active if d.monitor_id == monitor_id]
    for candidate in exact:
        remaining_ok = candidate.end is None or candidate.end - now >= spec.remaining_gte
        duration_ok = candidate.end is not None and candidate.end - candidate.start <= spec.duration_lte
        if remaining_ok and duration_ok:
            return found(True, _describe(world, candidate, now), [candidate])
    if exact:
        return found(False, "; ".join(_describe(world, d, now) for d in exact), exact)
    others = [d for d in state.downtimes.values() if d.monitor_id == monitor_id]
    if others:
        return found(False, "no active downtime on it; " + "; ".join(_describe(world, d, now) for d in others),
                     others)
    if active:
        return found(False, f"no downtime targets monitor {monitor_id} alone; active: " +
                     "; ".join(_describe(world, d, now) for d in active), active)
    return _outcome(False, expected, f"no downtime targets monitor {monitor_id}")
