"""``WorldPort``: all a tool may ask of the world it lives in.

A tool's replica, checks, actions, effects, reach and delivery are handed a ``WorldPort``
(the environment implements it) and their own replica, never the environment itself: a
tool cannot look another tool up, nor hang state on the world. What a replica must keep
between calls (the actor it writes as for world rules, a socket server) lives in the
replica.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ancha.scene.model import Scene
    from ancha.world.kernel.bus import Bus
    from ancha.world.kernel.clock import SimClock
    from ancha.world.kernel.feed import EventFeed
    from ancha.world.kernel.records import Record
    from ancha.world.kernel.scheduler import Due
    from ancha.world.kernel.tool import RecordRef, ToolRequest, ToolResponse
    from ancha.world.kernel.trace import Trace
    from ancha.world.kernel.world_secrets import WorldSecrets


class WorldPort(Protocol):
    """One trial's world, as its tools see it."""

    # --- what the world is -------------------------------------------------------------

    @property
    def id(self) -> str:
        """The environment's id (it names the world in URLs and logs)."""
        ...

    @property
    def scene(self) -> Scene:
        """The scene this world was built from (people, their accounts, shared seeds)."""
        ...

    @property
    def trial(self) -> int: ...

    @property
    def agent(self) -> Mapping[str, Any]:
        """The agent's settings (``agent.*`` of ancha.yaml, such as ``slack_transport``)."""
        ...

    @property
    def status(self) -> str:
        """``running`` until the trial ends."""
        ...

    @property
    def agent_accounts(self) -> Collection[str]:
        """Refs of the agent's own accounts on every tool: ``from:`` one names the agent."""
        ...

    # --- time, events, records ---------------------------------------------------------

    @property
    def clock(self) -> SimClock: ...

    def agent_now(self) -> float:
        """Epoch seconds on the agent's own clock: the world's when the agent's clock follows
        it (``agent.clock: world``), else the machine's. What a vendor signs with a timestamp
        the agent's SDK checks against its clock (Slack's request signatures)."""
        ...

    @property
    def bus(self) -> Bus:
        """Where a tool publishes its domain events, and hears the world's."""
        ...

    @property
    def trace(self) -> Trace:
        """Every call made in this world, in order (read-only for tools)."""
        ...

    @property
    def feed(self) -> EventFeed:
        """What the agent hears: a tool's delivery pushes its events here."""
        ...

    def schedule(self, at: float, callback: Callable[[], None], label: str = "") -> Due:
        """Run ``callback`` once simulated time reaches ``at`` (epoch seconds)."""
        ...

    def cancel(self, due: Due) -> None:
        """Forget a scheduled item that has not run yet."""
        ...

    def record(self, kind: str, at: float | None = None, **data: Any) -> Record:
        """Add a people/process record (now, unless ``at``), announced as ``record_added``."""
        ...

    def dispatch(self, tool: str, request: ToolRequest) -> ToolResponse:
        """Make a call to a tool of this world and trace it (a world rule's or a person's
        write goes through the replica's own API this way)."""
        ...

    # --- ids and refs ------------------------------------------------------------------

    @property
    def rng(self) -> random.Random:
        """The trial's deterministic RNG: the same scene and trial give the same world."""
        ...

    def random_hex(self, n: int) -> str: ...

    @property
    def secrets(self) -> WorldSecrets:
        """Tokens, keys and passwords to hand out: unguessable without the run's seed, the same
        for the same seed (a replayed trial's agent calls with the tokens it had)."""
        ...

    @property
    def refs(self) -> Mapping[str, RecordRef]: ...

    def register_ref(self, name: str | None, kind: str, tool: str, record_id: str) -> None: ...

    def ref_id(self, name: str, kind: str | None = None) -> str:
        """The id a scene ref names; ``LookupError`` when it names nothing (or another kind)."""
        ...

    # --- whether the agent waits -------------------------------------------------------

    @property
    def agent_active_at(self) -> float:
        """Monotonic (real) time the agent's latest tool request started or ended."""
        ...

    def agent_changed(self) -> None:
        """Whether the agent waits may have changed (a tool's own event transport)."""
        ...

    def add_waiter(self, waiter: Callable[[], bool]) -> None:
        """Another way the agent can wait for the world (``waiter()`` says whether it does)."""
        ...

    def hold_agent(self, seconds: float) -> None:
        """Count the agent as working for the next ``seconds`` real seconds (a 429's wait)."""
        ...
