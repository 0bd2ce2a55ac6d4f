"""The seam between the world and its tools: what a tool declares about itself.

Tool folders import this module (never the registry, which imports every tool): see
``ToolSpec``. Every callback a tool declares is handed its own replica (typed: a
``ToolSpec[SlackReplica]`` hands a ``SlackReplica``) and the ``WorldPort``, in the order
``(body, replica, world)``; no tool looks itself up or sees the environment.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ancha.scene.sections import BodyKind, WorldSection
from ancha.world.kernel.tool import StateOutcome, ToolRequest, ToolResponse

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from ancha.world.kernel.hostnames import HostRoute
    from ancha.world.kernel.ledger import CoverageLedger
    from ancha.world.kernel.port import WorldPort
    from ancha.world.kernel.predicate import CompiledPredicate
    from ancha.world.kernel.reach import Directory, Reach
    from ancha.world.kernel.rendered import ObjectChange, Rendered
    from ancha.world.kernel.webhook import WebhookForm

R = TypeVar("R")
"""A tool's replica class."""

Body = dict[str, Any]
"""A resolved body as the scene keeps it (JSON, refs bare)."""


@dataclass(frozen=True, slots=True)
class StateKind(Generic[R]):
    """A state check (usable as a predicate too): how it resolves, grades and is watched.

    ``events`` are the bus event types that can change it; a predicate on it is
    re-evaluated only then, by ``compile`` when the tool has an incremental form, else by
    grading it again.
    """

    body: BodyKind
    evaluate: Callable[[Body, R, WorldPort], StateOutcome]
    events: frozenset[str]
    compile: Callable[[str, Body, R, WorldPort], CompiledPredicate] | None = None
    """``(key, body, replica, world)``: the incremental predicate on it."""


@dataclass(frozen=True, slots=True)
class PredicateKind(Generic[R]):
    """A predicate that is not a state check (``issue_labeled``)."""

    body: BodyKind
    compile: Callable[[str, Body, R, WorldPort], CompiledPredicate]
    """``(key, body, replica, world)``."""


@dataclass(frozen=True, slots=True)
class ActionKind(Generic[R]):
    """A world-rule action: performed through the replica (traced as actor ``world``);
    ``perform(body, replica, world)`` answers what went wrong, or None."""

    body: BodyKind
    perform: Callable[[Body, R, WorldPort], str | None]


Release = Callable[[], None]
"""Ends a fault effect when its fault resolves."""


@dataclass(frozen=True, slots=True)
class EffectKind(Generic[R]):
    """A fault effect (``world_rules.faults[].effects``): what holds while a fault is active.

    ``apply(body, replica, world, fault)`` starts it when the fault (its bare ref) starts, through the
    replica itself (calls traced with actor ``world``, domain events, notifications), and
    answers how to end it when the fault resolves: a monitor recovers, a metric returns to
    its baseline, log lines stop. None when nothing ends with the fault (an incident once
    triggered stays until someone resolves it).
    """

    body: BodyKind
    apply: Callable[[Body, R, WorldPort, str], Release | None]


@dataclass(frozen=True, slots=True)
class TimelineMark:
    """A moment of a tool's state that the console's timeline shows in the tool's lane (an
    incident triggered or resolved, a monitor's state), read from its final snapshot."""

    at: str
    """ISO 8601, as the tool's own timestamps give it."""
    label: str
    state: str
    """A word the console colours by: ``alert``, ``warn``, ``ok`` or ``info``."""


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[R]):
    name: str
    world: WorldSection
    """The ``world.<tool>`` section of scene files."""
    replica: Callable[[WorldPort, Any], R]
    """Builds one trial's replica from the world and the resolved seed (JSON)."""
    variables: tuple[str, ...] = ("token",)
    """Credentials the agent gets as ``ANCHA_<TOOL>_<NAME>`` (``url`` always)."""
    templates: tuple[str, ...] = ("url", "token", "signing_secret")
    """Credentials usable as ``{{<tool>.<name>}}`` in ancha.yaml."""
    reach: Callable[[R, WorldPort, Directory], Reach] | None = None
    """How people are reached on this tool, and how they write there: ``(replica, world,
    directory)``."""
    delivery: Callable[[R, WorldPort], None] | None = None
    """Subscribes the agent's event feed to what this tool tells the agent."""
    webhook: WebhookForm | None = None
    """How the vendor POSTs those events to a URL (an endpoint agent's ``agent.url``)."""
    secure: bool = False
    """Its official SDK only talks https (the ``pagerduty`` client refuses other URLs): agents
    get its URL on the server's TLS listener, signed by a CA they are told to trust."""
    transports: tuple[str, ...] = ("feed",)
    """How this build can deliver the tool's events to an agent (``agent.<tool>_transport``);
    ``http`` too when the tool has a ``webhook``."""
    websocket: Callable[[R, str, Scope, Receive, Send], Awaitable[None]] | None = None
    """Serves a WebSocket opened below the tool's URL (Slack's Socket Mode), given the replica
    and the path relative to the tool's URL; None: the tool has none."""
    checks: tuple[StateKind[R], ...] = ()
    predicates: tuple[PredicateKind[R], ...] = ()
    actions: tuple[ActionKind[R], ...] = ()
    effects: tuple[EffectKind[R], ...] = ()
    """What this tool's part of a fault can be (``<tool>.<effect>``)."""
    real_hosts: Callable[[R], Mapping[str, HostRoute]] | None = None
    shared: Callable[[R], Mapping[str, object]] | None = None
    """What the replica shares with every other trial of its scene and never changes (a seeded
    history, a repository's seeded objects), by a name that is the same in every trial: a
    checkpoint (``ancha fork``) names these instead of copying them, and a restored world
    takes them from a world freshly built from the same scene."""
    """The vendor's hostnames this trial's replica answers on with ``agent.hostnames: real``,
    and where each leads (``hostnames.HostRoute``); given the replica, since some depend on the
    scene (Okta's org subdomain). None: the tool has none."""
    agent_env: dict[str, str] = field(default_factory=dict)
    """Variables every agent of a scene with this tool gets (what its official SDK needs to
    talk to a replica); the agent's own ``agent.env`` still wins."""
    judge_view: Callable[[dict[str, Any]], str | None] | None = None
    """What the judge sees of this tool's final state (from its snapshot), as text."""
    timeline: Callable[[dict[str, Any]], list[TimelineMark]] | None = None
    """What the console's timeline shows of this tool's final state (from its snapshot)."""
    render: Callable[[ObjectChange], Rendered | None] | None = None
    """How the console's world diff shows one object of this tool's snapshot that changed from
    seed to end (``kernel.rendered``); None for an object it does not render at that level (a
    pull request's comment: the console then asks about the pull request around it). None: the
    console shows every change generically."""
    vendor_files: tuple[str, ...] = ()
    """The generated vendor data the tool ships (``vendor/<name>.json.gz`` in its folder, read
    through ``ancha.world.kernel.vendor_data``): ``ancha doctor`` reads each afresh."""
    data_check: Callable[[], str] | None = None
    """Checks the tool's vendor data beyond reading each file (a schema built from it) for
    ``ancha doctor``: answers what it found, as a clause of doctor's ``data`` line, or raises
    ``VendorDataMissing``; None: reading the files is check enough."""
    coverage: CoverageLedger | None = None
    """The tool's coverage ledger (its ``coverage.py``): which of the vendor's operations it
    serves; ``python -m ancha.vendor regenerate`` rebuilds every tool's."""
    secret_patterns: tuple[str, ...] = ()
    """Regexes of this tool's credential shapes: never shown to the judge model."""
    agent_accounts: Callable[[Body], list[str]] = field(default=lambda seed: [])
    """Refs of the agent's own accounts in a resolved seed (``from:`` one names the agent anywhere)."""
    max_body: int = 10 * 1024 * 1024
    """Largest request body the server reads for this tool; a larger one is answered with
    ``body_too_large`` before the replica sees it (and is not traced)."""
    body_too_large: Callable[[int], ToolResponse] | None = None
    """The vendor's answer to a body over ``max_body`` (given that limit); None: a plain 413."""
    decode_body: Callable[[ToolRequest, int], Callable[[], ToolRequest | ToolResponse] | None] | None = None
    """For a request sent with a ``Content-Encoding`` (git's gzip requests to GitHub): given it
    and ``max_body``, the job that decodes its body, or None to hand the tool the body as sent.
    The server runs the job in a worker thread, since inflating up to ``max_body`` takes longer
    than the event loop may be held; it sees only the request, never the world, and gives the
    request the tool answers (its body decoded) or the tool's refusal (decoded past ``max_body``,
    or not decodable), which is answered untraced, as an oversized body is."""


