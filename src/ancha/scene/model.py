"""The scene, as loaded and validated: what a trial's world is built from.

Refs are stored bare (no ``$``, no kind prefix): the loader checks kinds and strips
them. Times are absolute UTC datetimes (the loader resolves signed offsets from
``clock.start``). Durations are float seconds. Everything here round-trips through
JSON (``Scene.model_dump(mode="json", by_alias=True)``), which is how the runner
hands a scene to a server that may live in another process.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_CLOCK_START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ClockSpec(_Model):
    start: datetime = DEFAULT_CLOCK_START
    limit: float = 3600.0
    """Simulated-time budget of one trial, in seconds."""
    speed: float = 1.0
    """Simulated seconds per real second while the agent works."""


# --- world.slack ----------------------------------------------------------------


class SlackTeam(_Model):
    name: str = "Acme"
    domain: str = "acme"


class SlackBot(_Model):
    ref: str = "slack_bot"
    name: str = "ancha"


class SlackUser(_Model):
    ref: str | None = None
    name: str
    real_name: str | None = None
    email: str | None = None
    title: str | None = None
    tz: str | None = None
    is_admin: bool = False
    deleted: bool = False
    person: str | None = None


class SlackChannel(_Model):
    ref: str | None = None
    name: str
    private: bool = False
    topic: str | None = None
    purpose: str | None = None
    members: list[str] = Field(default_factory=list)
    """User refs; the bot's ref makes the bot a member."""
    archived: bool = False


class SlackMessage(_Model):
    ref: str | None = None
    channel: str
    """Channel ref."""
    from_: str = Field(alias="from")
    """User ref (a seeded user or the bot)."""
    text: str = ""
    at: datetime | None = None
    """None: the replica spaces seeded messages out before clock.start, in order."""
    thread_of: str | None = None
    """Message ref of the thread parent."""
    reactions: dict[str, list[str]] = Field(default_factory=dict)
    """emoji name -> user refs."""
    files: list[dict[str, Any]] = Field(default_factory=list)


class SlackWorld(_Model):
    team: SlackTeam = Field(default_factory=SlackTeam)
    bot: SlackBot = Field(default_factory=SlackBot)
    users: list[SlackUser] = Field(default_factory=list)
    channels: list[SlackChannel] = Field(default_factory=list)
    messages: list[SlackMessage] = Field(default_factory=list)
    """Inline messages followed by those of ``messages_file``, in file order."""


class World(_Model):
    slack: SlackWorld | None = None
    github: dict[str, Any] | None = None
    """Temporary: the GitHub seed's JSON form until the tool seam lands."""


# --- checks ------------------------------------------------------------------------


class TraceCheck(_Model):
    called: list[str] = Field(default_factory=list)
    not_called: list[str] = Field(default_factory=list)
    status: Literal["any"] | None = None


class SlackMessageState(_Model):
    channel: str
    from_: str | None = Field(default=None, alias="from")
    text_contains: str | None = None
    in_thread_of: str | None = None
    count_gte: int = 1


class StateCheck(_Model):
    slack_message: SlackMessageState | None = Field(default=None, alias="slack.message")


# --- people, predicates, process checks (issue: people and simulated time) -------------


class MessageSelector(_Model):
    """Selects Slack messages (and later GitHub issues/comments) written during the trial.

    ``to``/``from_person`` are person names (bare); ``in_``, ``in_thread_of``, ``from_user``
    are bare refs. ``fact`` is ``person.fact``. At least one field is set."""

    to: str | None = None
    in_: str | None = Field(default=None, alias="in")
    in_thread_of: str | None = None
    from_user: str | None = None
    """``from`` naming a user ref (``$slack_bot`` also names the agent on every tool)."""
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
    state: StateCheck | None = None
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
    """tool -> bare user ref, e.g. {"slack": "slack_laura"}."""
    listens: list[str] = Field(default_factory=list)
    """Bare channel refs."""
    replies_after: tuple[float, float] = (60.0, 60.0)
    """Reply delay in simulated seconds: fixed (a, a) or a range drawn per reply."""
    away: list[AwayWindow] = Field(default_factory=list)
    facts: dict[str, Fact] = Field(default_factory=dict)
    decisions: dict[str, Decision] = Field(default_factory=dict)
    otherwise: str | None = None
    voice: Literal["scene", "model"] = "scene"


class SlackMessageAction(_Model):
    channel: str
    from_: str = Field(alias="from")
    text: str
    thread_of: str | None = None


class SlackReactionAction(_Model):
    channel: str
    message: str
    """Bare message ref."""
    from_: str = Field(alias="from")
    name: str


class Action(_Model):
    slack_message: SlackMessageAction | None = Field(default=None, alias="slack.message")
    slack_reaction: SlackReactionAction | None = Field(default=None, alias="slack.reaction")


class EventRule(_Model):
    at: float | None = None
    """Seconds after clock.start."""
    after: Predicate | None = None
    delay: float = 0.0
    unless: Predicate | None = None
    do: list[Action] = Field(default_factory=list)


class WorldRules(_Model):
    events: list[EventRule] = Field(default_factory=list)


CHECK_KINDS = ("trace", "state", "judge", "revealed", "knows", "told", "decided", "message", "never", "before",
               "within")
PROCESS_KINDS = CHECK_KINDS[3:]


class CheckSpec(_Model):
    id: str
    trace: TraceCheck | None = None
    state: StateCheck | None = None
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
        for name in CHECK_KINDS:
            if getattr(self, name) is not None:
                return name
        raise ValueError(f"check {self.id} has no kind")


class Scene(_Model):
    name: str
    description: str = ""
    task: str = ""
    clock: ClockSpec = Field(default_factory=ClockSpec)
    world: World = Field(default_factory=World)
    people: dict[str, Person] = Field(default_factory=dict)
    world_rules: WorldRules = Field(default_factory=WorldRules)
    checks: list[CheckSpec] = Field(default_factory=list)
    pass_: list[str] = Field(default_factory=list, alias="pass")
    """Required check ids; the loader fills in every check id when the file omits it."""
    path: str = ""
    """The scene file's absolute path (for messages and results)."""
    source_hash: str = ""
    """sha256 of the file's bytes (and of messages_file's): seeds each trial's RNG."""

    @property
    def tools(self) -> list[str]:
        return [name for name in ("slack", "github") if getattr(self.world, name) is not None]
