"""Living-world faults: effects that keep part of the world broken until someone fixes it.

Each fault of ``world_rules.faults`` starts at ``clock.start + starts`` (a fault starting
at or before the start of the trial is already there when the agent arrives), or when its
``starts: { after: <predicate> }`` first holds. Starting applies its effects in order,
each through its tool (``EffectKind.apply``: a monitor in Alert, a metric at the faulty
value, log lines at a rate, an incident triggered once) and records ``fault_started``
with the trace seqs its effects made.

From then on the fault waits for ``resolved_when``: the first time it holds while the
fault is active (at once, if it already holds), every effect is released in reverse
order (monitors recover, metrics return to baseline, log lines stop) and
``fault_resolved`` is recorded, which is what the ``fault_resolved`` check and
predicate read. Its predicates are watched from the start of the trial, like every
other predicate of the scene, so state predicates see every change.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from ancha.scene.model import Effect, FaultRule, Scene
from ancha.world.kernel.spec import Release

if TYPE_CHECKING:
    from ancha.world.environment import Environment

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Fault:
    """One fault of the trial and where it stands."""

    rule: FaultRule
    started_at: float | None = None
    resolved_at: float | None = None
    releases: list[Release] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return self.rule.ref

    @property
    def active(self) -> bool:
        return self.started_at is not None and self.resolved_at is None


class Faults:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.faults = [Fault(rule) for rule in env.scene.world_rules.faults]
        for fault in self.faults:
            env.register_ref(fault.ref, "fault", "world", fault.ref)

    def start(self) -> None:
        """Watch every fault's conditions; start those due at the start of the trial now and
        schedule the others."""
        env = self.env
        for fault in self.faults:
            env.predicates.watch(fault.rule.resolved_when)
            if fault.rule.after is not None:
                env.predicates.watch(fault.rule.after, partial(self._start_after, fault))
            elif fault.rule.at is not None and fault.rule.at > 0:
                env.schedule(env.clock.start + fault.rule.at, partial(self._start, fault), f"fault {fault.ref}")
            else:
                self._start(fault)

    def active(self) -> list[str]:
        """Refs of the faults active now."""
        return [f.ref for f in self.faults if f.active]

    def _start_after(self, fault: Fault, held: float) -> None:
        self._start(fault)

    def _start(self, fault: Fault) -> None:
        if fault.started_at is not None or self.env.status != "running":
            return
        env = self.env
        fault.started_at = env.clock.now()
        first = len(env.trace) + 1
        errors = [error for effect in fault.rule.effects if (error := self._apply(fault, effect)) is not None]
        started: dict[str, object] = {"fault": fault.ref, "seqs": list(range(first, len(env.trace) + 1))}
        if errors:
            started["errors"] = errors
        env.record("fault_started", at=fault.started_at, **started)
        env.predicates.when_holds(fault.rule.resolved_when, partial(self._resolve_under, fault, fault.rule))

    def rescene(self, scene: Scene) -> None:
        """Follow a changed scene from now on (``ancha fork --set``): a fault whose rule changed
        takes the new one. Active, it swaps its effects for the new ones now, and waits for
        the new ``resolved_when``; not started yet, it starts as the new rule says when it
        starts (its start time stays as scheduled)."""
        rules = {rule.ref: rule for rule in scene.world_rules.faults}
        for fault in self.faults:
            rule = rules.get(fault.ref)
            if rule is None or rule == fault.rule:
                continue
            old, fault.rule = fault.rule, rule
            if not fault.active:
                continue
            if rule.effects != old.effects:
                for release in reversed(fault.releases):
                    release()
                fault.releases.clear()
                for effect in rule.effects:
                    self._apply(fault, effect)
            self.env.predicates.watch(rule.resolved_when)
            self.env.predicates.when_holds(rule.resolved_when, partial(self._resolve_under, fault, rule))

    def _resolve_under(self, fault: Fault, rule: FaultRule, held: float) -> None:
        """``resolved_when`` of ``rule`` held: it resolves the fault while that is still its rule."""
        if fault.rule is rule:
            self._resolve(fault, held)

    def _apply(self, fault: Fault, effect: Effect) -> str | None:
        """Start one effect; what went wrong, or None."""
        ((key, body),) = effect.items()
        kind = self.env.registry.effects.get(key)
        if kind is None or kind.body.tool not in self.env.tools:
            return f"{key}: this world has no {key.split('.', 1)[0]}"
        try:
            release = kind.apply(body, self.env.tools[kind.body.tool], self.env, fault.ref)
        except LookupError as exc:  # a ref this world does not have (a scene built by hand)
            return f"{key}: {exc}"
        if release is not None:
            fault.releases.append(release)
        return None

    def _resolve(self, fault: Fault, held: float) -> None:
        if not fault.active:
            return
        env = self.env
        fault.resolved_at = env.clock.now()
        first = len(env.trace) + 1
        errors: list[str] = []
        for release in reversed(fault.releases):
            try:
                release()
            except Exception as exc:  # one broken release must not keep the others in place
                log.exception("releasing an effect of fault %s failed", fault.ref)
                errors.append(f"{type(exc).__name__}: {exc}")
        fault.releases.clear()
        resolved: dict[str, object] = {"fault": fault.ref, "seqs": list(range(first, len(env.trace) + 1))}
        if errors:
            resolved["errors"] = errors
        env.record("fault_resolved", at=fault.resolved_at, **resolved)
