"""Predicates: conditions on the world, compiled once and re-evaluated only when a bus
event that can change them arrives; each one's first-held time is recorded.

``compile_predicate(p, env)`` turns a scene ``Predicate`` into a ``CompiledPredicate``
with ``events`` (the bus event types that can change it), ``holds``, ``first_held``
(simulated time) and ``on_event(event) -> holds``. Leaves look only at what changed:

- ``called``: the new trace entry (``call_traced``) against the compiled pattern: an
  agent call that worked;
- ``message``: the new ``message`` record (``record_added``) against the selector;
- ``decided``/``knows``/``told``/``revealed``: the new record of that kind;
- ``state`` (a tool's state check or predicate, from the tool registry): the tool's own
  incremental node when it has one, else graded again on the bus events that can change
  it;
- ``all``/``any``/``not``: their children's current truth (``not`` of a thing that never
  held holds from the start).

Called, message and record leaves only ever go from false to true and are rebuilt
exactly from history when compiled late; a state predicate and ``not`` are not, so
their first-held time is only known when watched from the start.

``PredicateWatcher(env)`` shares compiled nodes by ``Predicate.key()``, subscribes to
each event type once and hands an event only to the leaves listening for it
(``record_added`` further by record kind); a leaf that changes updates its parents.
The first time a watched predicate holds it writes ``env.record("predicate", key=...,
held=True)`` at the event's time and calls its ``on_hold`` callbacks with that time.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from ancha.scene.check_kinds import form as check_form
from ancha.scene.model import Predicate
from ancha.world.call_patterns import compile_pattern
from ancha.world.kernel.bus import DomainEvent
from ancha.world.kernel.predicate import CALL_TRACED, RECORD_ADDED, CompiledPredicate
from ancha.world.kernel.records import Record
from ancha.world.selectors import (
    CompiledSelector,
    compile_selector,
    fact_name,
    fact_owner,
    person_name,
    record_seqs,
)

if TYPE_CHECKING:
    from ancha.world.environment import Environment
    from ancha.world.kernel.tool import StateOutcome

RECORD_KINDS = {"decided": "decided", "knows": "knows", "told": "knows", "revealed": "revealed"}

OnHold = Callable[[float], None]


class WorldPredicate(CompiledPredicate):
    """A predicate of the world's own (not a tool's): it reads the whole environment."""

    def __init__(self, key: str, env: Environment) -> None:
        super().__init__(key)
        self.env = env


class Never(WorldPredicate):
    """A predicate naming something the world does not have: it never holds."""

    def __init__(self, key: str, env: Environment, reason: str) -> None:
        super().__init__(key, env)
        self.reason = reason


class Called(WorldPredicate):
    events = frozenset({CALL_TRACED})

    def __init__(self, key: str, env: Environment, pattern: str) -> None:
        super().__init__(key, env)
        self.pattern = compile_pattern(pattern)
        for entry in env.trace:
            if entry.worked and self.pattern.matches_call(entry):
                self._set(True, entry.at, [entry.seq])
                break

    def on_event(self, event: DomainEvent) -> bool:
        if not self.holds:
            entry = event.data["entry"]
            if entry.worked and self.pattern.matches_call(entry):
                self._set(True, entry.at, [entry.seq])
        return self.holds


class MessageMatch(WorldPredicate):
    events = frozenset({RECORD_ADDED})
    record_kinds = frozenset({"message"})

    def __init__(self, key: str, env: Environment, selector: CompiledSelector) -> None:
        super().__init__(key, env)
        self.selector = selector
        for record in env.records.items:
            if record.kind == "message" and selector.matches(record.data):
                self._hold(record)
                break

    def _hold(self, record: Record) -> None:
        seq = record.data.get("seq")
        self._set(True, record.at, [] if seq is None else [int(seq)])

    def on_event(self, event: DomainEvent) -> bool:
        if not self.holds:
            record: Record = event.data["record"]
            if record.kind == "message" and self.selector.matches(record.data):
                self._hold(record)
        return self.holds


class Requirement:
    """One record a record predicate needs: its kind and the fields it must have."""

    __slots__ = ("kind", "fields", "label")

    def __init__(self, kind: str, fields: dict[str, str], label: str) -> None:
        self.kind = kind
        self.fields = fields
        self.label = label

    def met_by(self, record: Record) -> bool:
        data = record.data
        return record.kind == self.kind and all(data.get(k) == v for k, v in self.fields.items())


def requirements(kind: str, value: list[str]) -> tuple[list[Requirement], list[str]]:
    """What a ``decided``/``knows``/``told``/``revealed`` value needs, and the facts it
    needs that hold from the start (an owner knows their own facts)."""
    if kind == "revealed":
        facts = [fact_name(f) for f in value]
        return [Requirement("revealed", {"person": fact_owner(f), "fact": f}, f"{fact_owner(f)} revealed {f}")
                for f in facts], []
    if not value:
        raise ValueError(f"{kind} needs a person")
    person = person_name(value[0])
    if kind == "decided":
        if len(value) not in (2, 3):
            raise ValueError("decided is [person, decision] or [person, decision, option]")
        fields = {"person": person, "decision": value[1]}
        label = f"{person} decided {value[1]}"
        if len(value) == 3:
            fields["option"] = value[2]
            label += f" as {value[2]}"
        return [Requirement("decided", fields, label)], []
    if len(value) < 2:
        raise ValueError(f"{kind} is [person, fact, ...]")
    needed: list[Requirement] = []
    own: list[str] = []
    for fact in (fact_name(f) for f in value[1:]):
        if fact_owner(fact) == person:
            own.append(fact)
        else:
            needed.append(Requirement("knows", {"person": person, "fact": fact}, f"{person} knows {fact}"))
    return needed, own


class RecordsHeld(WorldPredicate):
    """``decided``/``knows``/``told``/``revealed``: holds once every required record exists."""

    events = frozenset({RECORD_ADDED})

    def __init__(self, key: str, env: Environment, kind: str, value: list[str]) -> None:
        super().__init__(key, env)
        self.kind = kind
        needed, _own = requirements(kind, value)
        self.remaining = needed
        self.record_kinds = frozenset(r.kind for r in needed)
        self.sources: list[Record] = []
        if not needed:
            self._set(True, env.clock.start)
            return
        for record in env.records.items:
            if record.kind in self.record_kinds:
                self._take(record)
                if self.holds:
                    break

    def _take(self, record: Record) -> None:
        for requirement in self.remaining:
            if requirement.met_by(record):
                self.remaining = [r for r in self.remaining if r is not requirement]
                self.sources.append(record)
                if not self.remaining:
                    self._set(True, record.at)
                return

    def on_event(self, event: DomainEvent) -> bool:
        if not self.holds:
            record: Record = event.data["record"]
            if record.kind in self.record_kinds:
                self._take(record)
        return self.holds

    @property
    def evidence(self) -> list[int]:
        return message_seqs(self.env, self.sources)


def message_seqs(env: Environment, records: Iterable[Record]) -> list[int]:
    """Trace seqs of the messages behind ``knows``/``revealed``/``decided`` records."""
    wanted: set[tuple[Any, Any]] = set()
    for record in records:
        message = record.data.get("message")
        if isinstance(message, dict):
            wanted.add((message.get("channel"), message.get("ts")))
    if not wanted:
        return []
    found = [r for r in env.records.of_kind("message") if (r.data.get("channel"), r.data.get("ts")) in wanted]
    return record_seqs(found)


class StateHeld(WorldPredicate):
    """A state check without an incremental form: graded again on each event that can change it."""

    monotonic = False

    def __init__(self, key: str, env: Environment, grade: Callable[[], StateOutcome], events: frozenset[str]) -> None:
        super().__init__(key, env)
        self.grade = grade
        self.events = events
        self._evaluate(env.clock.peek())

    def _evaluate(self, at: float) -> None:
        outcome = self.grade()
        self._set(outcome.passed, at, outcome.evidence)

    def on_event(self, event: DomainEvent) -> bool:
        self._evaluate(event.at)
        return self.holds


class Composite(WorldPredicate):
    def __init__(self, key: str, env: Environment, children: list[CompiledPredicate]) -> None:
        super().__init__(key, env)
        self.children = children
        self.height = 1 + max((c.height for c in children), default=0)
        self.events = frozenset().union(*(c.events for c in children))
        self.monotonic = all(c.monotonic for c in children) and not isinstance(self, Not)
        for child in children:
            child.parents.append(self)
        if self._combine():
            self._set(True, self._initial_time())

    def _combine(self) -> bool:
        raise NotImplementedError

    def _initial_time(self) -> float:
        return self.env.clock.peek()

    def recombine(self, at: float) -> bool:
        """Recompute from the children; return whether ``holds`` changed."""
        before = self.holds
        holds = self._combine()
        self._set(holds, at, (seq for c in self.children if c.holds for seq in c.evidence))
        return holds != before

    def on_event(self, event: DomainEvent) -> bool:
        for child in self.children:
            if event.type in child.events:
                child.on_event(event)
        self.recombine(event.at)
        return self.holds


class All(Composite):
    def _combine(self) -> bool:
        return all(c.holds for c in self.children)

    def _initial_time(self) -> float:
        times = [c.first_held for c in self.children]
        if self.monotonic and all(t is not None for t in times):
            return max(t for t in times if t is not None)
        return super()._initial_time()


class Any_(Composite):
    def _combine(self) -> bool:
        return any(c.holds for c in self.children)

    def _initial_time(self) -> float:
        times = [c.first_held for c in self.children if c.holds and c.first_held is not None]
        if self.monotonic and times:
            return min(times)
        return super()._initial_time()


class Not(Composite):
    def _combine(self) -> bool:
        return not self.children[0].holds

    def _initial_time(self) -> float:
        child = self.children[0]
        if child.first_held is None and (child.monotonic or _untouched(self.env)):
            return self.env.clock.start
        return super()._initial_time()


def _untouched(env: Environment) -> bool:
    return len(env.trace) == 0 and not env.records.items


def replica_for(env: Environment, tool: str) -> Any:
    """The replica a tool's kind is graded on: ``tool``'s in this world (None for the world's
    own kinds); ``LookupError`` when the scene checks a tool its world does not have."""
    if tool not in env.registry.tools:
        return None
    replica = env.tools.get(tool)
    if replica is None:
        raise LookupError(f"the world has no {tool}: add world.{tool} to the scene, or drop the check")
    return replica


def compile_state(key: str, env: Environment, state: dict[str, dict[str, Any]]) -> CompiledPredicate:
    """A node for a tool's state check or predicate body (``{kind: body}``)."""
    ((kind_key, body),) = state.items()
    kind = env.registry.states.get(kind_key)
    if kind is not None:
        replica = replica_for(env, kind.body.tool)
        if kind.compile is not None:
            return kind.compile(key, body, replica, env)
        return StateHeld(key, env, partial(kind.evaluate, body, replica, env), kind.events)
    predicate = env.registry.predicates.get(kind_key)
    if predicate is not None:
        return predicate.compile(key, body, replica_for(env, predicate.body.tool), env)
    raise LookupError(f"this build has no predicate {kind_key}")


Compiler = Callable[[Predicate], CompiledPredicate]


def build(predicate: Predicate, env: Environment, child: Compiler) -> CompiledPredicate:
    """One node for ``predicate``; its children come from ``child`` (shared or not)."""
    key = predicate.key()
    try:
        if predicate.called is not None:
            return Called(key, env, predicate.called)
        if predicate.message is not None:
            return MessageMatch(key, env, compile_selector(predicate.message, env))
        for kind in ("decided", "knows", "told", "revealed"):
            value = getattr(predicate, kind)
            if value is not None:
                return RecordsHeld(key, env, kind, value)
        if predicate.state is not None:
            return compile_state(key, env, predicate.state)
        if predicate.all is not None:
            return All(key, env, [child(c) for c in predicate.all])
        if predicate.any is not None:
            return Any_(key, env, [child(c) for c in predicate.any])
        if predicate.not_ is not None:
            return Not(key, env, [child(predicate.not_)])
    except (LookupError, ValueError) as exc:
        return Never(key, env, str(exc))
    return Never(key, env, "the predicate is empty")


def compile_predicate(predicate: Predicate, env: Environment) -> CompiledPredicate:
    """A standalone compiled predicate (equal sub-predicates share one node)."""
    cache: dict[str, CompiledPredicate] = {}

    def child(p: Predicate) -> CompiledPredicate:
        key = p.key()
        node = cache.get(key)
        if node is None:
            node = cache[key] = build(p, env, child)
        return node

    return child(predicate)


class PredicateWatcher:
    """Every predicate a trial watches, evaluated as the world changes."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._nodes: dict[str, CompiledPredicate] = {}
        self._listeners: dict[str, list[CompiledPredicate]] = {}
        """event type -> leaves (``record_added`` leaves are under ``record_added:<kind>``)."""
        self._watched: dict[str, list[OnHold]] = {}
        self._next_hold: dict[str, list[OnHold]] = {}
        """key -> callbacks waiting for the predicate to hold again (``when_holds``)."""
        self._subscribed: set[str] = set()
        self.evaluations = 0
        """How many times a leaf looked at an event (for tests and benchmarks)."""

    # --- registering ------------------------------------------------------------------

    def watch(self, predicate: Predicate, on_hold: OnHold | None = None) -> None:
        """Watch ``predicate`` (once per ``key()``); call ``on_hold(first_held)`` the first
        time it holds, or right away if it already has."""
        node = self._node(predicate)
        callbacks = self._watched.get(node.key)
        if callbacks is None:
            callbacks = self._watched[node.key] = []
            if node.first_held is not None:
                self._record(node, node.first_held)
        if on_hold is not None and on_hold not in callbacks:
            callbacks.append(on_hold)
            if node.first_held is not None:
                on_hold(node.first_held)

    def when_holds(self, predicate: Predicate, callback: OnHold) -> None:
        """Call ``callback(at)`` once, the next time ``predicate`` holds: right away if it holds
        now (a fault waiting for its resolution, whatever happened before it started)."""
        node = self._node(predicate)
        if node.key not in self._watched:
            self.watch(predicate)
        if node.holds:
            callback(self.env.clock.now())
            return
        self._next_hold.setdefault(node.key, []).append(callback)

    def compiled(self, predicate: Predicate) -> CompiledPredicate | None:
        return self._nodes.get(predicate.key())

    def first_held(self, predicate: Predicate) -> float | None:
        node = self._nodes.get(predicate.key())
        return None if node is None else node.first_held

    def held_now(self, predicate: Predicate) -> bool:
        node = self._nodes.get(predicate.key())
        return node is not None and node.holds

    def is_watched(self, predicate: Predicate) -> bool:
        return predicate.key() in self._watched

    def _node(self, predicate: Predicate) -> CompiledPredicate:
        key = predicate.key()
        node = self._nodes.get(key)
        if node is None:
            node = build(predicate, self.env, self._node)
            self._nodes[key] = node
            if not isinstance(node, Composite):
                self._listen(node)
        return node

    def _listen(self, leaf: CompiledPredicate) -> None:
        for event_type in leaf.events:
            if event_type not in self._subscribed:
                self._subscribed.add(event_type)
                self.env.bus.subscribe(event_type, self._on_event)
            if event_type == RECORD_ADDED:
                for kind in leaf.record_kinds:
                    self._listeners.setdefault(f"{RECORD_ADDED}:{kind}", []).append(leaf)
            else:
                self._listeners.setdefault(event_type, []).append(leaf)

    # --- events -----------------------------------------------------------------------

    def _on_event(self, event: DomainEvent) -> None:
        slot = event.type
        if slot == RECORD_ADDED:
            slot = f"{RECORD_ADDED}:{event.data['record'].kind}"
        listeners = self._listeners.get(slot)
        if not listeners:
            return
        fresh: list[CompiledPredicate] = []
        changed: list[CompiledPredicate] = []
        for leaf in tuple(listeners):
            self.evaluations += 1
            before, first = leaf.holds, leaf.first_held
            leaf.on_event(event)
            if first is None and leaf.first_held is not None:
                fresh.append(leaf)
            if leaf.holds != before:
                changed.append(leaf)
        if changed:
            self._propagate(changed, event.at, fresh)
        for node in fresh:
            if node.key in self._watched and node.first_held is not None:
                self._record(node, node.first_held)
                for callback in tuple(self._watched[node.key]):
                    callback(node.first_held)
        if changed and self._next_hold:
            for key in [k for k in self._next_hold if self._nodes[k].holds]:
                for callback in self._next_hold.pop(key):
                    callback(event.at)

    def _propagate(self, changed: list[CompiledPredicate], at: float, fresh: list[CompiledPredicate]) -> None:
        """Recompute the composites above ``changed``, lowest first, so that each one sees
        every child already settled by this event (no transient truths)."""
        heap: list[tuple[int, int, Composite]] = []
        queued: set[int] = set()

        def push(parents: list[CompiledPredicate]) -> None:
            for parent in parents:
                if id(parent) not in queued:
                    queued.add(id(parent))
                    # only composites are ever a node's parent (Composite.__init__ links them)
                    heapq.heappush(heap, (parent.height, id(parent), cast(Composite, parent)))

        for leaf in changed:
            push(leaf.parents)
        while heap:
            _, _, parent = heapq.heappop(heap)
            first = parent.first_held
            if parent.recombine(at):
                push(parent.parents)
            if first is None and parent.first_held is not None:
                fresh.append(parent)

    def _record(self, node: CompiledPredicate, at: float) -> None:
        self.env.record("predicate", at=at, key=node.key, held=True)


def watcher_of(env: Environment) -> PredicateWatcher:
    """The environment's watcher (``env.predicates``), created on first use."""
    watcher = getattr(env, "predicates", None)
    if not isinstance(watcher, PredicateWatcher):
        watcher = PredicateWatcher(env)
        env.predicates = watcher  # type: ignore[attr-defined]
    return watcher


def scene_predicates(env: Environment) -> list[Predicate]:
    """Every predicate the scene's checks (before, within) and world-rule events use."""
    found: list[Predicate] = []
    for check in env.scene.checks:
        found.extend(check_form(check.kind).milestones(check.body))
    for rule in env.scene.world_rules.events:
        found.extend(p for p in (rule.after, rule.unless) if p is not None)
    for fault in env.scene.world_rules.faults:
        found.extend(p for p in (fault.after, fault.resolved_when) if p is not None)
    return found


def register_scene_predicates(env: Environment) -> PredicateWatcher:
    """Watch every predicate the scene uses from now on (call when the world is built)."""
    watcher = watcher_of(env)
    for predicate in scene_predicates(env):
        watcher.watch(predicate)
    return watcher
