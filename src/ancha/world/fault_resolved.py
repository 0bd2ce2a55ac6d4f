"""``fault_resolved: $fault``: the check and predicate that a living-world fault is resolved.

Written as a state check (``state: { fault_resolved: $orders_latency }``) or as a
predicate (``fault_resolved: $orders_latency``). It reads the ``fault_started`` and
``fault_resolved`` records the fault engine (``faults.py``) writes, so as a predicate it
only ever goes from false to true and is rebuilt exactly from history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel, ConfigDict

from ancha.scene.sections import BodyKind
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.predicate import RECORD_ADDED
from ancha.world.kernel.records import Record
from ancha.world.kernel.spec import StateKind
from ancha.world.kernel.tool import StateOutcome
from ancha.world.predicates import WorldPredicate

if TYPE_CHECKING:
    from ancha.scene.predicates import Resolver
    from ancha.world.environment import Environment
    from ancha.world.kernel.port import WorldPort

KEY = "fault_resolved"


class FaultResolved(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fault: str
    """The fault's bare ref."""


def resolve(data: Any, path: str, resolver: Resolver) -> FaultResolved | None:
    fault = resolver.refs.resolve(data, "fault", resolver.source.reporter(path))
    return None if fault is None else FaultResolved(fault=fault)


def evaluate(body: dict[str, Any], _replica: None, world: WorldPort) -> StateOutcome:
    env = cast("Environment", world)  # a kind of the world's own: its world is the environment
    fault = FaultResolved.model_validate(body).fault
    started = _first(env, "fault_started", fault)
    resolved = _first(env, "fault_resolved", fault)
    expected = f"${fault} resolved"
    clock = env.clock
    if resolved is not None:
        since = f", {_minutes(resolved.at - started.at)} after it started" if started is not None else ""
        return StateOutcome(True, expected, "resolved",
                            f"fault ${fault} was resolved at {clock.isoformat(resolved.at)}{since}", [])
    if started is not None:
        return StateOutcome(False, expected, "active",
                            f"fault ${fault} started at {clock.isoformat(started.at)} and was still active "
                            "when the trial ended: its resolved_when never held", [])
    return StateOutcome(False, expected, "not started",
                        f"fault ${fault} never started: its starts condition never held", [])


def compile_held(key: str, body: dict[str, Any], _replica: None, world: WorldPort) -> FaultResolvedHeld:
    return FaultResolvedHeld(key, cast("Environment", world), body)


class FaultResolvedHeld(WorldPredicate):
    events = frozenset({RECORD_ADDED})
    record_kinds = frozenset({"fault_resolved"})

    def __init__(self, key: str, env: Environment, body: dict[str, Any]) -> None:
        super().__init__(key, env)
        self.fault = FaultResolved.model_validate(body).fault
        record = _first(env, "fault_resolved", self.fault)
        if record is not None:
            self._set(True, record.at)

    def on_event(self, event: DomainEvent) -> bool:
        record: Record = event.data["record"]
        if not self.holds and record.kind == "fault_resolved" and record.data.get("fault") == self.fault:
            self._set(True, record.at)
        return self.holds


def _first(env: Environment, kind: str, fault: str) -> Record | None:
    return next((r for r in env.records.items if r.kind == kind and r.data.get("fault") == fault), None)


def _minutes(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f}m"


FAULT_RESOLVED = StateKind(
    BodyKind(KEY, "world", str, resolve, "a living-world fault of world_rules.faults was resolved"),
    evaluate, frozenset({RECORD_ADDED}), compile_held)
