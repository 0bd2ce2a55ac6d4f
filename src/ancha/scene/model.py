"""The scene, as loaded and validated: what a trial's world is built from.

Refs are stored bare (no ``$``, no kind prefix): the loader checks kinds and strips
them. Times are absolute UTC datetimes (the loader resolves signed offsets from
``clock.start``). Durations are float seconds. Everything here round-trips through
JSON (``Scene.model_dump(mode="json", by_alias=True)``), which is how the runner
hands a scene to a server that may live in another process.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StringConstraints

M = TypeVar("M", bound=BaseModel)
DEFAULT_CLOCK_START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


SCENE_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"
"""A scene's name is a name, not a path: it names the scene's folder in the run folder."""
SceneName = Annotated[str, StringConstraints(pattern=SCENE_NAME_PATTERN)]
MAX_TASK_BYTES = 64 * 1024
"""A task reaches the agent in ``ANCHA_TASK`` (and ``{{task}}`` templates); Linux refuses a single
environment string over 128 KiB ("Argument list too long"), so a task is at most 64 KiB of UTF-8,
leaving room for templates that wrap it. Longer material belongs in the world."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ClockSpec(_Model):
    start: datetime = DEFAULT_CLOCK_START
    limit: float = 3600.0
    """Simulated-time budget of one trial, in seconds."""
    speed: float = 1.0
    """Simulated seconds per real second while the agent works."""


class TraceCheck(_Model):
    called: list[str] = Field(default_factory=list)
    not_called: list[str] = Field(default_factory=list)
    status: Literal["any"] | None = None


StateBody = dict[str, dict[str, Any]]
"""A state check (or tool predicate) body: exactly one key, the kind a tool registered
(``<tool>.<kind>``, or a bare predicate name), holding the tool's resolved body as JSON."""


# --- people, predicates, process checks (issue: people and simulated time) -------------


class MessageSelector(_Model):
    """Selects messages (on any tool that carries conversations) written during the trial.

    ``to``/``from_person`` are person names (bare); ``in_``, ``in_thread_of``, ``from_user``
    are bare refs. ``fact`` is ``person.fact``. At least one field is set."""

    to: str | None = None
    in_: str | None = Field(default=None, alias="in")
    """A bare ref of a place where messages are written (a channel, an issue, a pull)."""
    in_thread_of: str | None = None
    from_user: str | None = None
    """``from`` naming a user ref (the agent's own account on one tool names it on every tool)."""
    from_person: str | None = None
    """``from`` naming a person (bare name, ``$name`` or ``$person.name``)."""
    text_contains: list[str] = Field(default_factory=list)
    fact: str | None = None


class MessageCheck(MessageSelector):
    count_gte: int = 1


class Predicate(_Model):
    """A condition the engine watches and timestamps the first time it holds.

    Exactly one field is set. ``decided``/``knows``/``told``/``revealed`` take the same
    values as the checks of that name; ``state`` is any state check body."""

    called: str | None = None
    message: MessageSelector | None = None
    decided: list[str] | None = None
    knows: list[str] | None = None
    told: list[str] | None = None
    revealed: list[str] | None = None
    state: StateBody | None = None
    """A state check body, or a tool predicate (``issue_labeled``), keyed by its kind."""
    all: list[Predicate] | None = None
    any: list[Predicate] | None = None
    not_: Predicate | None = Field(default=None, alias="not")

    def key(self) -> str:
        """A stable identity: equal predicates are watched once."""
        return self.model_dump_json(by_alias=True, exclude_none=True)


class Within(_Model):
    event: Predicate
    of: Predicate | None = None
    """None: the start of the trial."""
    limit: float
    """Seconds."""


class Fact(_Model):
    text: str
    asked_by: list[str] = Field(default_factory=list)
    """Patterns (case-insensitive substrings or /regex/) that, in a message to the owner, make them reveal it."""
    match: list[str] = Field(default_factory=list)
    """Patterns that, in any message, tell its recipients this fact. The loader fills in [text] when omitted."""


class Decision(_Model):
    asked_by: list[str] = Field(default_factory=list)
    options: list[str] = Field(default_factory=list)
    chooses: str
    needs: list[str] = Field(default_factory=list)
    """Facts (``person.fact``) the decider must know before deciding."""
    text: str = "Let's go with {option}."
    pending: str = "I can't decide that yet."


class AwayWindow(_Model):
    from_: float = Field(alias="from")
    """Seconds after clock.start."""
    to: float


class Person(_Model):
    name: str
    """Display name (``name:`` in the file; the person's key is the map key)."""
    accounts: dict[str, str] = Field(default_factory=dict)
    """tool -> bare user ref of the person's account there."""
    listens: list[str] = Field(default_factory=list)
    """Bare channel refs."""
    replies_after: tuple[float, float] = (60.0, 60.0)
    """Reply delay in simulated seconds: fixed (a, a) or a range drawn per reply."""
    away: list[AwayWindow] = Field(default_factory=list)
    facts: dict[str, Fact] = Field(default_factory=dict)
    decisions: dict[str, Decision] = Field(default_factory=dict)
    otherwise: str | None = None
    voice: Literal["scene", "model"] = "scene"

    def away_until(self, start: float, at: float) -> float | None:
        """The end of the away window the person is in at ``at`` (epoch seconds; following
        back-to-back windows), or None when they are there. ``start`` is ``clock.start``."""
        until: float | None = None
        moved = True
        t = at
        while moved:
            moved = False
            for window in self.away:
                if start + window.from_ <= t < start + window.to:
                    t = until = start + window.to
                    moved = True
        return until


Action = dict[str, dict[str, Any]]
"""One world-rule action: exactly one key, the kind a tool registered (``<tool>.<action>``),
holding the tool's resolved body as JSON."""


class EventRule(_Model):
    at: float | None = None
    """Seconds after clock.start."""
    after: Predicate | None = None
    delay: float = 0.0
    unless: Predicate | None = None
    do: list[Action] = Field(default_factory=list)


Effect = dict[str, dict[str, Any]]
"""One fault effect: exactly one key, the kind a tool registered (``<tool>.<effect>``),
holding the tool's resolved body as JSON."""


class FaultRule(_Model):
    """A living-world fault: effects that hold from ``starts`` until ``resolved_when``."""

    ref: str
    at: float | None = None
    """Seconds after clock.start (``starts: 5m``); None when it starts ``after`` a predicate."""
    after: Predicate | None = None
    """``starts: { after: <predicate> }``: the fault starts when it first holds."""
    effects: list[Effect] = Field(default_factory=list)
    resolved_when: Predicate


class WorldRules(_Model):
    events: list[EventRule] = Field(default_factory=list)
    faults: list[FaultRule] = Field(default_factory=list)


EXPECT_UNCHANGED_CHECK = "expect_unchanged"
"""The id of the check a scene's ``expect_unchanged`` adds (graded after the trial, always required)."""

COMMON_CHECK_FIELDS = ("id", "line")
"""The fields of ``CheckSpec`` that are not a kind."""


class CheckSpec(_Model):
    """A resolved check: its id and exactly one kind's body, under the kind's key.

    One field per check kind, in the order of ``ancha.scene.check_kinds.CHECK_FORMS`` (which
    refuses to load otherwise): this is the shape scenes cross the process boundary in, and
    what its many readers (``spec.judge``, ``spec.trace``...) type against."""

    id: str
    trace: TraceCheck | None = None
    state: StateBody | None = None
    judge: str | None = None
    revealed: list[str] | None = None
    """``person.fact`` items."""
    knows: list[str] | None = None
    """``[person, person.fact, ...]``."""
    told: list[str] | None = None
    decided: list[str] | None = None
    """``[person, decision]`` or ``[person, decision, option]``."""
    message: MessageCheck | None = None
    never: MessageSelector | None = None
    before: list[Predicate] | None = None
    within: Within | None = None
    line: int | None = None
    """Line of the check in the scene file, for messages that point back at it."""

    @property
    def kind(self) -> str:
        """The key of the check's kind (the one body set)."""
        for name in type(self).model_fields:
            if name not in COMMON_CHECK_FIELDS and getattr(self, name) is not None:
                return name
        raise ValueError(f"check {self.id} has no kind")

    @property
    def body(self) -> Any:
        """What the check's kind holds (``spec.<kind>``)."""
        return getattr(self, self.kind)


class Scene(_Model):
    name: SceneName
    description: str = ""
    task: str = ""
    clock: ClockSpec = Field(default_factory=ClockSpec)
    world: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Each tool's resolved seed (JSON), by the registered tool's name."""
    people: dict[str, Person] = Field(default_factory=dict)
    world_rules: WorldRules = Field(default_factory=WorldRules)
    checks: list[CheckSpec] = Field(default_factory=list)
    pass_: list[str] = Field(default_factory=list, alias="pass")
    """Required check ids; the loader fills in every check id when the file omits it."""
    expect_unchanged: list[str] = Field(default_factory=list)
    """What the agent must not change, each ``$ref``, ``tool`` or ``tool.section`` (ours, not in
    the reference): any agent change there fails the ``expect_unchanged`` check."""
    path: str = ""
    """The scene file's absolute path (for messages and results)."""
    source_hash: str = ""
    """sha256 of the file's bytes (and of messages_file's): seeds each trial's RNG."""

    _seeds: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def tools(self) -> list[str]:
        return list(self.world)

    def seed(self, tool: str, model: type[M]) -> M | None:
        """``world.<tool>`` parsed into the tool's model, once per scene: every trial of a
        scene shares it (and must not change it)."""
        if tool not in self.world:
            return None
        parsed = self._seeds.get(tool)
        if not isinstance(parsed, model):
            parsed = self._seeds[tool] = model.model_validate(self.world[tool])
        return parsed  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        """Equal when the fields are: what ``seed`` parsed from them is only a cache."""
        if not isinstance(other, Scene):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def keep_seeds(self, seeds: dict[str, BaseModel]) -> None:
        """The tools' models the loader built ``world`` from: ``seed`` then returns them instead
        of parsing ``world`` again (a scene handed to a server in this process)."""
        self._seeds.update(seeds)

    def accounts(self, tool: str) -> dict[str, str]:
        """Bare user ref -> the person whose account on ``tool`` it is."""
        return {person.accounts[tool]: key for key, person in self.people.items() if tool in person.accounts}
