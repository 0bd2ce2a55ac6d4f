"""DatadogState: one trial's monitors, downtimes, events, dashboards, metrics and logs, and
the rules that tie them together (monitor evaluation, transitions, silencing).

Monitors are evaluated lazily: when they are read, when a metric or a fault changes, and
at a few one-shot times that a seed or a fault makes known in advance (a seeded point in
the future, a held metric value filling a monitor's window). Nothing recurs on the clock,
so a world with Datadog in it still goes idle.
"""

from __future__ import annotations

import bisect
import string
from typing import Any

from ancha.world.kernel.port import WorldPort
from ancha.world.tools.datadog.downtimes import Downtime
from ancha.world.tools.datadog.events import domain_event
from ancha.world.tools.datadog.logs import LogStore, log_id
from ancha.world.tools.datadog.metric_expressions import window_values
from ancha.world.tools.datadog.metrics import Metric, MetricStore, Override
from ancha.world.tools.datadog.monitors import Monitor, Transition, default_options
from ancha.world.tools.datadog.records import Dashboard, Event
from ancha.world.tools.datadog.scene_file import DatadogFile
from ancha.world.tools.datadog.slos import Slo

TITLE_PREFIX = {"Alert": "Triggered", "Warn": "Warn", "No Data": "No Data", "OK": "Recovered"}
ALERT_TYPE = {"Alert": "error", "Warn": "warning", "No Data": "warning", "OK": "success"}
MAX_ONE_SHOTS = 200


class DatadogState:
    """Everything one trial's Datadog holds; ``world`` gives it the clock, the bus and ids."""

    def __init__(self, world: WorldPort, seed: DatadogFile) -> None:
        self.world = world
        self.monitors: dict[int, Monitor] = {}
        self.downtimes: dict[str, Downtime] = {}
        self.events: list[Event] = []
        self.events_by_id: dict[int, Event] = {}
        self.dashboards: dict[str, Dashboard] = {}
        self.slos: dict[str, Slo] = {}
        self.metrics = MetricStore(world.random_hex(16).encode())
        self.logs = LogStore(seed.log_index())
        self._next_monitor = 10_000_000 + world.rng.randrange(80_000_000)
        self._next_event = 7_600_000_000_000_000_000 + world.rng.randrange(10**15)
        self._one_shots = 0
        self._evaluating = False
        self._seed(seed)

    # --- clock and ids ---------------------------------------------------------------------

    def now(self) -> float:
        """The current simulated time, for reads (does not take a new instant)."""
        return self.world.clock.peek()

    def stamp(self) -> float:
        """A new instant, for writes."""
        return self.world.clock.now()

    def new_monitor_id(self) -> int:
        self._next_monitor += 1 + self.world.rng.randrange(40)
        return self._next_monitor

    def new_event_id(self) -> int:
        self._next_event += 1 + self.world.rng.randrange(10**6)
        return self._next_event

    def new_downtime_id(self) -> str:
        h = self.world.random_hex(32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def new_dashboard_id(self) -> str:
        chars = string.ascii_lowercase + string.digits
        return "-".join("".join(self.world.rng.choice(chars) for _ in range(3)) for _ in range(3))

    # --- seeding ----------------------------------------------------------------------------

    def _seed(self, seed: DatadogFile) -> None:
        world = self.world
        start = world.clock.start
        for name, metric_seed in seed.metrics.items():
            metric = self.metrics.ensure(name)
            metric.baseline, metric.noise = metric_seed.baseline, metric_seed.noise
            for at, value in metric_seed.points or []:
                metric.add_point(at, value)
                if at > start:
                    self._evaluate_at(at + 1, f"seeded point of {name}")
        for monitor_seed in seed.monitors:
            monitor = Monitor(
                id=self.new_monitor_id(),
                name=monitor_seed.name,
                type=monitor_seed.type,
                query=monitor_seed.query,
                message=monitor_seed.message,
                tags=list(monitor_seed.tags),
                priority=monitor_seed.priority,
                options=default_options(monitor_seed.query, None, monitor_seed.type),
                ref=monitor_seed.ref,
                created=start - 86400,
                modified=start - 86400,
                base_state=monitor_seed.state,
                state=monitor_seed.state,
                state_modified=start - 3600,
                seeded=True,
            )
            if monitor_seed.state == "Alert":
                monitor.last_triggered = start - 3600
            self.monitors[monitor.id] = monitor
            world.register_ref(monitor_seed.ref, "monitor", "datadog", str(monitor.id))
        for monitor in self.monitors.values():
            desired = self._desired(monitor, start)
            if desired != monitor.state:  # the seed's metrics already decide it: no transition
                monitor.state = desired
        for downtime_seed in seed.downtimes:
            monitor_id = (
                int(world.ref_id(downtime_seed.monitor, "monitor")) if downtime_seed.monitor else None
            )
            downtime = Downtime(
                id=self.new_downtime_id(),
                scope=downtime_seed.scope,
                start=downtime_seed.start or start - 60,
                end=downtime_seed.end,
                created=start - 60,
                modified=start - 60,
                monitor_id=monitor_id,
                monitor_tags=list(downtime_seed.monitor_tags or []),
                message=downtime_seed.message,
                seeded=True,
            )
            self.downtimes[downtime.id] = downtime
        for dashboard_seed in seed.dashboards:
            dashboard = Dashboard(
                id=self.new_dashboard_id(),
                title=dashboard_seed.title,
                created=start - 86400,
                description=dashboard_seed.description,
                layout_type=dashboard_seed.layout_type,
                widgets=list(dashboard_seed.widgets),
                ref=dashboard_seed.ref,
            )
            self.dashboards[dashboard.id] = dashboard
            world.register_ref(dashboard_seed.ref, "dashboard", "datadog", dashboard.id)
        for event_seed in sorted(seed.events, key=lambda e: e.at if e.at is not None else start):
            event = Event(
                id=self.new_event_id(),
                title=event_seed.title,
                text=event_seed.text,
                at=event_seed.at if event_seed.at is not None else start - 1,
                tags=list(event_seed.tags),
                alert_type=event_seed.alert_type,
                priority=event_seed.priority,
                host=event_seed.host,
                source_type_name=event_seed.source_type_name,
                ref=event_seed.ref,
                seeded=True,
            )
            self._insert_event(event)
            world.register_ref(event_seed.ref, "event", "datadog", str(event.id))
        for ref, line in self.logs.seeded.by_ref.items():
            world.register_ref(ref, "log", "datadog", log_id(line))

    def _insert_event(self, event: Event) -> None:
        if self.events and event.at < self.events[-1].at:
            i = bisect.bisect_right([e.at for e in self.events], event.at)
            self.events.insert(i, event)
        else:
            self.events.append(event)
        self.events_by_id[event.id] = event

    # --- monitors ---------------------------------------------------------------------------

    def live_monitors(self) -> list[Monitor]:
        return [m for m in self.monitors.values() if m.deleted is None]

    def monitor(self, monitor_id: int) -> Monitor | None:
        found = self.monitors.get(monitor_id)
        return found if found is not None and found.deleted is None else None

    def monitor_by_ref(self, ref: str) -> Monitor | None:
        try:
            return self.monitor(int(self.world.ref_id(ref, "monitor")))
        except (LookupError, ValueError):
            return None

    def _desired(self, monitor: Monitor, now: float) -> str:
        if monitor.forced:  # an active fault holds its state until it is resolved: it beats any other force
            faults = [state for key, state in monitor.forced.items() if key.startswith("fault:")]
            return faults[-1] if faults else next(reversed(monitor.forced.values()))
        parsed = monitor.parsed
        if (
            parsed is not None
            and monitor.type in ("metric alert", "query alert")
            and any(self.metrics.get(name) is not None for name in parsed.metric_names)
        ):
            decided = monitor.decide(parsed, window_values(self.metrics, parsed, now), now)
            if decided is None:
                return "No Data" if monitor.options.get("notify_no_data") else monitor.state
            return decided
        return monitor.base_state

    def evaluate(self, monitor: Monitor, cause: str = "metric", actor: str = "clock") -> None:
        """Bring ``monitor`` to the state its inputs decide now, recording a transition."""
        if monitor.deleted is not None:
            return
        desired = self._desired(monitor, self.now())
        if desired != monitor.state:
            self.transition(monitor, desired, cause, actor)

    def evaluate_all(self, cause: str = "metric", actor: str = "clock") -> None:
        if self._evaluating:
            return
        self._evaluating = True
        try:
            for monitor in self.live_monitors():
                self.evaluate(monitor, cause, actor)
        finally:
            self._evaluating = False

    def silenced(self, monitor: Monitor, now: float) -> bool:
        """An active downtime targets ``monitor``: its notifications are suppressed."""
        return any(d.active(now) and d.targets(monitor) for d in self.downtimes.values())

    def transition(self, monitor: Monitor, to: str, cause: str, actor: str) -> Transition:
        at = self.stamp()
        before = monitor.state
        notify = not self.silenced(monitor, at)
        record = Transition(at, before, to, cause, notify)
        monitor.transitions.append(record)
        monitor.state, monitor.state_modified = to, at
        if to == "Alert":
            monitor.last_triggered = at
        prefix = TITLE_PREFIX[to] if not (to == "Alert" and before in ("Warn", "No Data")) else "Triggered"
        event = Event(
            id=self.new_event_id(),
            title=f"[{prefix}] {monitor.name}",
            text=monitor.message,
            at=at,
            tags=[*monitor.tags, f"monitor:{monitor.id}"],
            alert_type=ALERT_TYPE[to],
            priority="normal",
            source_type_name="Monitor Alert",
            monitor_id=monitor.id,
            aggregation_key=f"monitor-{monitor.id}",
            actor=actor,
        )
        self._insert_event(event)
        self.world.bus.publish(
            domain_event(
                "monitor_state_changed",
                at,
                actor,
                monitor=monitor.id,
                ref=monitor.ref,
                event=event.id,
                notify=notify,
                cause=cause,
                **{"from": before, "to": to},
            )
        )
        return record

    def force(self, monitor: Monitor, key: str, state: str, actor: str = "world") -> None:
        monitor.forced.pop(key, None)
        monitor.forced[key] = state
        self.evaluate(monitor, key, actor)

    def unforce(self, monitor: Monitor, key: str, actor: str = "world") -> None:
        if monitor.forced.pop(key, None) is not None:
            self.evaluate(monitor, "released", actor)

    # --- metrics ---------------------------------------------------------------------------

    def hold_metric(self, name: str, key: str, value: float, tags: tuple[str, ...] = ()) -> None:
        """A fault's held value from now until ``release_metric``."""
        at = self.stamp()
        metric = self.metrics.ensure(name)
        metric.overrides.append(Override(key, value, at, None, tags))
        self._after_metric_change(metric, at)

    def release_metric(self, name: str, key: str) -> None:
        at = self.stamp()
        metric = self.metrics.ensure(name)
        for override in metric.overrides:
            if override.key == key and override.end is None:
                override.end = at
        self._after_metric_change(metric, at)

    def submit_points(
        self, name: str, points: list[tuple[float, float]], tags: tuple[str, ...], actor: str
    ) -> None:
        metric = self.metrics.ensure(name)
        for at, value in points:
            metric.add_point(at, value, tags)
        at = self.stamp()
        self.world.bus.publish(domain_event("metric_submitted", at, actor, metric=name, points=len(points)))
        self._after_metric_change(metric, at, actor)

    def _after_metric_change(self, metric: Metric, at: float, actor: str = "world") -> None:
        """Evaluate the monitors on ``metric`` now, and once more when their windows have filled."""
        windows: set[float] = set()
        for monitor in self.live_monitors():
            parsed = monitor.parsed
            if parsed is not None and metric.name in parsed.metric_names:
                self.evaluate(monitor, "metric", actor)
                windows.add(parsed.window)
        for window in sorted(windows):
            self._evaluate_at(at + window + 1, f"window of {metric.name}")

    def _evaluate_at(self, at: float, label: str) -> None:
        if self._one_shots >= MAX_ONE_SHOTS:
            return
        self._one_shots += 1
        self.world.schedule(
            at, lambda: self.evaluate_all("metric", "clock"), f"datadog: evaluate monitors ({label})"
        )

    # --- downtimes --------------------------------------------------------------------------

    def downtimes_for(self, monitor: Monitor, now: float) -> list[Downtime]:
        return [
            d
            for d in self.downtimes.values()
            if d.targets(monitor) and d.status(now) in ("active", "scheduled")
        ]

    # --- snapshot ----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        now = self.now()
        return {
            "monitors": [
                {
                    **m.to_dict(),
                    "ref": m.ref,
                    "seeded": m.seeded,
                    "deleted": m.deleted is not None,
                    "forced": dict(m.forced),
                    "transitions": [
                        {"at": t.at, "from": t.from_, "to": t.to, "cause": t.cause, "notified": t.notified}
                        for t in m.transitions
                    ],
                }
                for m in self.monitors.values()
            ],
            "downtimes": [
                {**d.to_dict(now), "seeded": d.seeded, "actor": d.actor} for d in self.downtimes.values()
            ],
            "events": [{**e.v1(), "seeded": e.seeded, "actor": e.actor} for e in self.events if not e.seeded],
            "dashboards": [d.summary() for d in self.dashboards.values()],
            "slos": [{**s.to_dict(), "deleted": s.deleted is not None} for s in self.slos.values()],
            "metrics": sorted(self.metrics.metrics),
            "logs": {"seeded": len(self.logs.seeded), "added": len(self.logs.added)},
        }
