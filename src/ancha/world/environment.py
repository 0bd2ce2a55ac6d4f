"""One trial's world: its clock, tools, trace, refs and lifecycle."""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ancha.durations import parse_duration
from ancha.scene.model import Scene
from ancha.world.agent_clock import AgentClockFile
from ancha.world.faults import Faults
from ancha.world.kernel.bus import Bus, DomainEvent
from ancha.world.kernel.clock import SimClock
from ancha.world.kernel.feed import EventFeed
from ancha.world.kernel.hostnames import REAL_HOST
from ancha.world.kernel.records import Record, Records
from ancha.world.kernel.scheduler import Due, Scheduler
from ancha.world.kernel.tool import RecordRef, StreamsSnapshot, Tool, ToolRequest, ToolResponse
from ancha.world.kernel.trace import Trace
from ancha.world.kernel.world_secrets import WorldSecrets
from ancha.world.people import People
from ancha.world.predicates import PredicateWatcher, register_scene_predicates
from ancha.world.registry import registry
from ancha.world.rules import WorldEvents
from ancha.world.ticker import Ticker, Timekeeper

if TYPE_CHECKING:
    from ancha.world.endpoint import EndpointDelivery

DEFAULT_IDLE_S = 10.0

class UnknownTool(KeyError):
    pass


class Environment:
    """A live world built from a scene for one trial.

    Status goes ``running`` -> ``done`` (the agent or someone said so), ``idle``
    (nothing pending and the world quiet for ``agent.idle`` while the agent waited) or
    ``timed_out`` (the clock passed ``clock.limit``); the runner ends it with a verdict
    after grading.

    Built in this order: tools (seeded), people (subscribed to the tools' events), the
    event feed's delivery, the predicate watcher (every predicate of the checks and
    rules), then the trial starts: owners know their facts, world events are
    scheduled, faults due at the start take effect and the others are scheduled.
    Time moves by ``timekeeper`` (``ticker.py``): the server starts a
    ``Ticker`` task per environment with ``start_ticker()``.
    """

    def __init__(self, env_id: str, scene: Scene, trial: int, agent: dict[str, Any] | None = None, *,
                 people: bool = True, seed: int | None = None, replay: bool = False) -> None:
        """``people=False`` builds the world without its people engine (no ``message``,
        ``knows``, ... records, no replies): for tests that write those records by hand.
        ``seed``: the run's seed; with the scene and the trial it decides every id, token and
        delay, so that the same calls at the same simulated times give the same world. Without
        one, ids and delays come from the scene and trial alone and tokens are drawn at random.
        ``replay``: a world for recorded calls, not an agent: its clock stands at the start and
        moves only to each call's instant (``world/replay.py``)."""
        self.id = env_id
        self.scene = scene
        self.trial = trial
        self.seed = seed
        self.replaying = replay
        self.until_agent = False
        """A fork's world: its clock stands at the fork instant until the agent is back (its first
        request, or its first wait), so the agent's start-up takes no simulated time from it."""
        """A world for recorded calls: its clock never flows, it moves only to each call's instant."""
        self.agent = agent or {}
        self.idle = _seconds(self.agent.get("idle"), DEFAULT_IDLE_S)
        """``agent.idle``: simulated seconds of quiet (while the agent waits) that end the trial."""
        self.agent_input = str(self.agent.get("input") or "command")
        self.wakes_on_wait = self.agent.get("mode") == "command" and self.agent_input == "command"
        """A command agent's feed wait with a duration is a wake-up in simulated time
        (``wait_feed``), and it is never ended for being quiet while it can still be woken."""
        self.rng = random.Random(trial_seed(scene.source_hash, trial, seed or 0))
        self.secrets = WorldSecrets(scene.source_hash or "", trial, secrets.randbits(63) if seed is None else seed,
                                    salt="" if seed is not None else secrets.token_hex(16))
        """Tokens, keys and passwords the tools hand out: unguessable without the seed."""
        self.clock = SimClock(scene.clock.start, scene.clock.speed)
        self.clock.hold(self.clock.start)  # the world is built at its start, however long that takes
        self.bus = Bus()
        self.trace = Trace()
        self._gaps: dict[tuple[str, str, str], int] = {}
        """Coverage-gap calls by (tool, method, path), kept as they happen: status polls read it often."""
        self.feed = EventFeed()
        self.agent_clock = AgentClockFile() if self.agent.get("clock") == "world" else None
        """Where the agent's libfaketime reads the world's time (``agent.clock: world``)."""
        self.records = Records()
        self.refs: dict[str, RecordRef] = {}
        self.agent_accounts: set[str] = set()
        """Refs of the agent's own accounts on every tool: ``from:`` one of them names the agent."""
        self.trial_token = "anc_trial_" + secrets.token_hex(16)
        self.events_token = "anc_events_" + secrets.token_hex(16)
        self.status = "running"
        self.ended_reason: str | None = None
        self.verdict: str | None = None
        self.ended_at: float | None = None
        """The simulated instant the trial ended (``finish``): a replay ends it there too."""
        self.scheduler = Scheduler()
        self.timekeeper = Timekeeper(self)
        self.ticker: Ticker | None = None
        self._arrived: float | None = None
        """The instant the agent's call being handled arrived at (the clock holds there)."""
        self._agent_request: ToolRequest | None = None
        """That call's request (the world's own calls it causes are traced without an instant)."""
        self.in_flight = 0
        """Agent requests to tools in progress (the server counts them)."""
        self.dispatching = 0
        """Tool calls being handled right now (a write's domain events come before its trace entry)."""
        self._waiting_external = False
        self._waiters: list[Callable[[], bool]] = []
        """Other ways the agent can wait for the world (a tool's event socket connection)."""
        self.agent_active_at = 0.0
        """Monotonic (real) time the agent's latest tool request started or ended."""
        self._held_until = 0.0
        """Monotonic (real) time until which the agent counts as working (``hold_agent``)."""
        self.endpoint: EndpointDelivery | None = None
        """HTTP delivery to an endpoint agent, once the runner has said where it listens."""
        self.last_activity = self.clock.start
        """Simulated time of the latest trace entry or record: the world is quiet since then."""
        self.bus.subscribe("call_traced", self._touch)
        self.bus.subscribe("record_added", self._touch)
        self.tools: dict[str, Tool] = {}
        self.registry = registry()
        """The tools of this build and the kinds they define."""
        specs = self.registry.tools
        for name in scene.tools:
            spec = specs.get(name)
            if spec is None:
                raise UnknownTool(f"this server has no {name} replica; tools: {', '.join(specs)}")
            self.tools[name] = spec.replica(self, scene.world[name])
            self.agent_accounts.update(spec.agent_accounts(scene.world[name]))
        self.people = People(self, enabled=people)
        for name, tool in self.tools.items():
            deliver = specs[name].delivery
            if deliver is not None:
                deliver(tool, self)
        self.predicates: PredicateWatcher = register_scene_predicates(self)
        self.world_events = WorldEvents(self)
        self.faults = Faults(self)
        self.people.start()
        self.world_events.start()
        self.faults.start()
        self.scheduler.on_change = self._wake
        self.feed.on_change = self._agent_changed
        if replay:
            self.clock.pause(at=self.clock.start)
        self.clock.release()
        self.clock.resume_from_here()
        if self.agent_clock is not None:
            self.agent_clock.follow(self.clock.peek())

    # --- ids and refs -----------------------------------------------------------------

    def random_hex(self, n: int) -> str:
        """``n`` hex digits from the trial's RNG: the same scene and trial give the same ids."""
        return f"{self.rng.getrandbits(4 * n):0{n}x}"

    def register_ref(self, name: str | None, kind: str, tool: str, record_id: str) -> None:
        if name:
            self.refs[name] = RecordRef(kind=kind, tool=tool, id=record_id)

    def ref_id(self, name: str, kind: str | None = None) -> str:
        """The id a scene ref names in this world; ``LookupError`` when it names nothing
        (or, with ``kind``, a record of another kind)."""
        record = self.refs.get(name)
        if record is None:
            raise LookupError(f"the world has no ref ${name}")
        if kind is not None and record.kind != kind:
            raise LookupError(f"${name} is a {record.kind}, not a {kind}")
        return record.id

    # --- requests ---------------------------------------------------------------------

    def dispatch(self, tool_name: str, request: ToolRequest, *, from_agent: bool = False,
                 arrived: float | None = None) -> ToolResponse:
        """Hand one request to a tool and trace it, whoever made it (see ``answer``)."""
        response = self.answer(tool_name, request, from_agent=from_agent, arrived=arrived)
        self.account(tool_name, request, response)
        return response

    def answer(self, tool_name: str, request: ToolRequest, *, from_agent: bool = False,
               arrived: float | None = None) -> ToolResponse:
        """The first half of ``dispatch``: the tool's answer, with what it changed in the world.
        ``account`` must follow before anything else reaches this environment: the server
        sends the answer in between, so that the caller need not wait for the bookkeeping.

        ``from_agent``: a call from outside the world (the agent's, through the server), which
        arrives at one simulated instant (``arrived``, or now): what was due by then happens
        first, and the clock holds at that instant until ``account`` is done, so the call's
        effects are stamped alike however long it takes. A replay sends the same calls at the
        same instants and gets the same world."""
        tool = self.tools.get(tool_name)
        if tool is None:
            raise UnknownTool(tool_name)
        if from_agent and not self.clock.held:
            at = _microseconds(self.clock.peek()) if arrived is None else arrived
            self.timekeeper.run_due(upto=at)
            self._arrived = self.clock.hold(at)
            self._agent_request = request
        self.dispatching += 1
        try:
            return tool.handle(request)
        except BaseException:
            if request is self._agent_request:
                self._let_go()
            raise
        finally:
            self.dispatching -= 1

    def account(self, tool_name: str, request: ToolRequest, response: ToolResponse) -> None:
        """The second half of ``dispatch``: trace the call, and let the world react to it
        (people hear what it said; the clock limit)."""
        arrived, head = None, b""
        if self._arrived is not None and request is self._agent_request:  # (not a call the world made meanwhile)
            arrived, head = self._arrived, _head(request.headers)  # what a replay needs to make it again
        try:
            entry = self.trace.add_call(
                self.clock.now(), response.actor, tool_name, request.method, request.path, request.query,
                response.status, request.body, response.body, response.worked, response.coverage_gap,
                request.headers.get("content-type", ""), request.headers.get(REAL_HOST, ""),
                arrived or 0.0, head,
            )
            if response.coverage_gap:
                key = (tool_name, request.method, request.path)
                self._gaps[key] = self._gaps.get(key, 0) + 1
            self.bus.publish(DomainEvent("call_traced", tool_name, entry.at, {"entry": entry}))
            self.check_limit()
        finally:
            if arrived is not None:
                self._let_go()

    def _let_go(self) -> None:
        """End an agent call's hold on the clock."""
        if self._arrived is not None:
            self._arrived = self._agent_request = None
            self.clock.release()

    def record(self, kind: str, at: float | None = None, **data: Any) -> Record:
        """Add a people/process record (at the current simulated time unless given) and
        announce it on the bus as ``record_added`` so that predicates can react."""
        return self.add_record(kind, self.clock.now() if at is None else at, data)

    def add_record(self, kind: str, at: float, data: dict[str, Any]) -> Record:
        """``record`` with its fields as one dict (kept as given, not copied): for hot paths."""
        record = self.records.append(kind, at, data)
        self.bus.publish(DomainEvent("record_added", "world", at, {"record": record}))
        return record

    # --- time -------------------------------------------------------------------------

    def agent_now(self) -> float:
        """Epoch seconds on the agent's own clock: the world's when its libfaketime reads the
        world's time (``agent_clock``), else the machine's."""
        return self.clock.peek() if self.agent_clock is not None else time.time()

    def schedule(self, at: float, callback: Callable[[], None], label: str = "") -> Due:
        """Run ``callback`` once simulated time reaches ``at`` (epoch seconds)."""
        return self.scheduler.schedule(at, callback, label)

    def cancel(self, due: Due) -> None:
        """Forget a scheduled item that has not run yet."""
        self.scheduler.cancel(due)

    def pending(self) -> int:
        """How many scheduled items are still to run."""
        return len(self.scheduler)

    @property
    def waiting_external(self) -> bool:
        """Set by the runner between two ``per_event`` invocations (no agent process running)."""
        return self._waiting_external

    @waiting_external.setter
    def waiting_external(self, value: bool) -> None:
        self._waiting_external = value
        self._agent_changed()

    @property
    def agent_waiting(self) -> bool:
        """The agent cannot act before the world does: it holds a feed long-poll with nothing
        to read and no request in flight, or the runner says it waits. An endpoint agent
        waits when no delivery to it is in flight or due and it has no request open."""
        if self._held_until and time.monotonic() < self._held_until:
            return False
        if self.endpoint is not None:
            return self.endpoint.quiet and self.in_flight == 0
        return self._waiting_external or (self.in_flight == 0 and (
            self.feed.blocked > 0 or any(waiter() for waiter in self._waiters)))

    def add_waiter(self, waiter: Callable[[], bool]) -> None:
        """Another way the agent can wait (``waiter()`` says whether it does now): a tool's own
        event transport, such as a tool's event socket. Its owner calls ``agent_changed()``
        whenever the answer may have changed."""
        self._waiters.append(waiter)

    def agent_changed(self) -> None:
        """Whether the agent waits may have changed (see ``_agent_changed``)."""
        self._agent_changed()

    def hold_agent(self, seconds: float) -> None:
        """Count the agent as working for the next ``seconds`` real seconds, whatever else it
        holds open: a tool told it to come back then (a 429's ``Retry-After``), and it sleeps
        meanwhile. The clock flows at ``speed`` through the sleep instead of jumping ahead,
        or ending the trial idle, while a listener thread waits to retry."""
        until = time.monotonic() + seconds
        if until <= self._held_until:
            return
        self._held_until = until
        self._agent_changed()
        if self.ticker is not None:  # reconsider once the hold is over
            self.ticker.later(seconds, self._agent_changed)

    def request_started(self) -> None:
        self.in_flight += 1
        self.agent_active_at = time.monotonic()
        self._agent_changed()

    def request_finished(self) -> None:
        self.in_flight -= 1
        self.agent_active_at = time.monotonic()
        self._agent_changed()

    def endpoint_changed(self) -> None:
        """A delivery to the endpoint agent started or ended: whether the agent waits may have changed."""
        self._agent_changed(from_endpoint=True)

    def _agent_changed(self, from_endpoint: bool = False) -> None:
        """Whether the agent waits may have changed: the clock is paused exactly while it
        waits (it then moves only by jumps), and the ticker reconsiders (and the endpoint
        delivery, which sends what the feed got)."""
        if self.endpoint is not None and not from_endpoint:
            self.endpoint.wake()
        if self.replaying:
            return
        if self.until_agent:  # a fork: the agent is not back yet while nothing of it is in flight or waiting
            if self.in_flight == 0 and not self.agent_waiting:
                self.clock.pause()
                return
            self.until_agent = False
        if self.agent_waiting:
            self.clock.pause()
            self._wake()
        else:
            self.clock.resume()
            if self.agent_clock is not None:  # the clock may have jumped while it waited: before it hears
                self.agent_clock.follow(self.clock.peek())

    async def wait_feed(self, cursor: int, wait: float, real_limit: float) -> list[dict[str, Any]]:
        """The agent's long-poll of its feed: the events after ``cursor``, or none once ``wait``
        is over. For a command agent (``wakes_on_wait``) ``wait`` is simulated time, a wake-up:
        the world jumps to the earlier of what is due next and the wait's end, then answers; it
        waits at most ``real_limit`` real seconds all the same (while the agent works on beside
        it, the clock flows). For any other reader ``wait`` is real seconds, at most ``real_limit``."""
        if wait <= 0:
            return self.feed.after(cursor)
        if not self.wakes_on_wait:
            return await self.feed.wait(cursor, min(wait, real_limit))
        wake: Due | None = None

        def wake_at_the_end(reader: int) -> None:
            nonlocal wake
            wake = self.schedule(self.clock.peek() + wait, lambda: self.feed.release(reader), "the agent's feed wait ends")

        try:
            return await self.feed.wait(cursor, real_limit, on_reader=wake_at_the_end)
        finally:
            if wake is not None:
                self.cancel(wake)

    def start_ticker(self) -> Ticker:
        """Keep time moving in the running event loop (the server calls this once)."""
        if self.ticker is None:
            self.ticker = Ticker(self)
            self.ticker.start()
        return self.ticker

    def _wake(self) -> None:
        if self.ticker is not None:
            self.ticker.wake()

    def hand_over_task(self) -> bool:
        """A ``per_event`` agent nothing has reached by the time the world would go idle gets
        the task as its first event (``{"service": "ancha", "type": "task"}``), so it runs
        once, as a command agent would; True when it was handed over. Idle counts anew."""
        if self.agent.get("input") != "per_event" or self.feed.events or self.feed.closed:
            return False
        now = self.clock.peek()
        self.feed.push({"service": "ancha", "type": "task", "at": self.clock.isoformat(now),
                        "payload": {"task": self.scene.task}})
        self.last_activity = now
        return True

    def _touch(self, event: DomainEvent) -> None:
        if event.at > self.last_activity:
            self.last_activity = event.at

    # --- lifecycle --------------------------------------------------------------------

    @property
    def deadline(self) -> float:
        return self.clock.start + self.scene.clock.limit

    def check_limit(self) -> bool:
        """Mark the trial timed out once simulated time passes ``clock.limit``."""
        if self.status == "running" and self.clock.peek() > self.deadline:
            self.finish("timed_out", "the clock passed clock.limit")
        return self.status == "timed_out"

    def end(self, status: str, reason: str, at: float | None = None) -> None:
        """End the trial from outside (the done URL, grading, a replay): at ``at`` (or now),
        after whatever was due by then has happened."""
        if self.status != "running" or self.clock.held:
            self.finish(status, reason)
            return
        instant = _microseconds(self.clock.peek()) if at is None else at
        self.clock.advance_to(instant)
        self.timekeeper.run_due(upto=instant)
        self.clock.hold(instant)
        try:
            self.finish(status, reason)
        finally:
            self.clock.release()

    def finish(self, status: str, reason: str) -> None:
        if self.status == "running":
            self.status = status
            self.ended_reason = reason
            self.ended_at = _microseconds(self.clock.peek())
            self.clock.stop(self.ended_at)
            self.feed.close()
            self._wake()

    def close(self) -> None:
        """Let go of what the world keeps outside memory (the trace's spool) and stop delivering
        to an endpoint agent: it is torn down."""
        if self.endpoint is not None:
            self.endpoint.stop()
        if self.agent_clock is not None:
            self.agent_clock.close()
        self.trace.close()

    # --- checkpoints ------------------------------------------------------------------

    _RUNTIME = ("ticker", "endpoint", "agent_clock", "_waiters", "trial_token", "events_token")
    """What belongs to the live world, not to a checkpoint: its event loop task, its agent's
    connections and files, its tokens for the agent."""

    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in self._RUNTIME}
        state.update(in_flight=0, dispatching=0, _held_until=0.0, _waiting_external=False, _arrived=None,
                     _agent_request=None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.ticker = None
        self.endpoint = None
        self.agent_clock = None
        self._waiters = []
        self.trial_token = "anc_trial_" + secrets.token_hex(16)
        self.events_token = "anc_events_" + secrets.token_hex(16)

    def checkpoint(self) -> bytes:
        """The world as it stands, as bytes ``ancha.world.checkpoint.restore`` makes a live world of."""
        from ancha.world.checkpoint import checkpoint

        return checkpoint(self)

    def restored(self, env_id: str, agent: dict[str, Any] | None) -> None:
        """Made live again from a checkpoint, as ``env_id``, for ``agent`` (its settings may differ
        from the checkpointed world's: a fork runs another agent)."""
        self.id = env_id
        self.agent = agent or {}
        self.idle = _seconds(self.agent.get("idle"), DEFAULT_IDLE_S)
        self.agent_input = str(self.agent.get("input") or "command")
        self.wakes_on_wait = self.agent.get("mode") == "command" and self.agent_input == "command"
        self.agent_clock = AgentClockFile() if self.agent.get("clock") == "world" else None
        self.agent_active_at = time.monotonic()
        self.replaying = False
        self.until_agent = True
        self.clock.pause(self.clock.peek())
        if self.agent_clock is not None:
            self.agent_clock.follow(self.clock.peek())

    def rescene(self, scene: Scene) -> None:
        """Go on under ``scene`` (the same world, something changed in its people or faults:
        ``ancha fork --set``): what is decided from here on follows it."""
        self.scene = scene
        self.people.rescene(scene)
        self.faults.rescene(scene)

    def coverage_gaps(self) -> list[dict[str, Any]]:
        return [{"tool": t, "method": m, "path": p, "calls": n} for (t, m, p), n in self._gaps.items()]

    def status_dict(self) -> dict[str, Any]:
        self.check_limit()
        return {
            "id": self.id,
            "scene": self.scene.name,
            "trial": self.trial,
            "seed": self.seed,
            "status": self.status,
            "ended_reason": self.ended_reason,
            "verdict": self.verdict,
            "clock": {
                "now": self.clock.isoformat(),
                "start": self.clock.isoformat(self.clock.start),
                "elapsed_s": round(self.clock.elapsed(), 3),
                "limit_s": self.scene.clock.limit,
                "speed": self.clock.speed,
                "ended_at": None if self.ended_at is None else self.clock.isoformat(self.ended_at),
            },
            "pending": self.pending(),
            "waiting": self.agent_waiting,
            "in_flight": self.in_flight,
            "idle_s": self.idle,
            "trace_entries": len(self.trace),
            "coverage_gaps": self.coverage_gaps(),
        }

    def records_jsonl(self) -> str:
        return self.records.to_jsonl()

    def snapshot(self) -> dict[str, Any]:
        return {name: tool.snapshot() for name, tool in self.tools.items()}

    def snapshot_json(self) -> Iterator[bytes]:
        """``world.json``: every tool's state as JSON text, as it is now, a piece at a time,
        so that a long seeded history is never turned into objects just to be written out
        again. Every tool's state is captured here; the pieces may be read later."""
        parts: list[bytes | Iterator[bytes]] = []
        for i, (name, tool) in enumerate(self.tools.items()):
            parts.append((b",\n" if i else b"\n") + json.dumps(name).encode() + b": ")
            if isinstance(tool, StreamsSnapshot):
                parts.append(tool.snapshot_json())
            else:
                parts.append(json.dumps(tool.snapshot(), indent=1, ensure_ascii=False, allow_nan=False).encode())
        return _joined(parts)


def _joined(parts: list[bytes | Iterator[bytes]]) -> Iterator[bytes]:
    yield b"{"
    for part in parts:
        if isinstance(part, bytes):
            yield part
        else:
            yield from part
    yield b"\n}\n"


def _seconds(value: Any, default: float) -> float:
    """A duration from the agent's settings: seconds as a number, or a string such as ``10s``."""
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return float(value)
    return parse_duration(str(value))


def trial_seed(source_hash: str, trial: int, seed: int = 0) -> int:
    """The trial's RNG seed: from the scene's hash, the trial and the run's seed (0: none given)."""
    text = f"{source_hash}:{trial}" if seed == 0 else f"{source_hash}:{trial}:{seed}"
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _microseconds(t: float) -> float:
    """``t`` on the microsecond: the instants a replay is told are the ones recorded."""
    return round(t * 1_000_000) / 1_000_000


CALL_HEADERS_SKIPPED = frozenset({"content-length", "connection", "keep-alive", "transfer-encoding",
                                  "accept-encoding", "te", "upgrade", "proxy-authorization"})
"""Request headers a replay does not need: how the bytes travelled, never what the call said."""


def _head(headers: dict[str, str]) -> bytes:
    return json.dumps({k: v for k, v in headers.items() if k.lower() not in CALL_HEADERS_SKIPPED},
                      separators=(",", ":"), ensure_ascii=False).encode()
