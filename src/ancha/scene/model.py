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


class CheckSpec(_Model):
    id: str
    trace: TraceCheck | None = None
    state: StateCheck | None = None
    judge: str | None = None
    line: int | None = None
    """Line of the check in the scene file, for messages that point back at it."""

    @property
    def kind(self) -> str:
        for name in ("trace", "state", "judge"):
            if getattr(self, name) is not None:
                return name
        raise ValueError(f"check {self.id} has no kind")


class Scene(_Model):
    name: str
    description: str = ""
    task: str = ""
    clock: ClockSpec = Field(default_factory=ClockSpec)
    world: World = Field(default_factory=World)
    checks: list[CheckSpec] = Field(default_factory=list)
    pass_: list[str] = Field(default_factory=list, alias="pass")
    """Required check ids; the loader fills in every check id when the file omits it."""
    path: str = ""
    """The scene file's absolute path (for messages and results)."""
    source_hash: str = ""
    """sha256 of the file's bytes (and of messages_file's): seeds each trial's RNG."""

    @property
    def tools(self) -> list[str]:
        return [name for name in ("slack",) if getattr(self.world, name) is not None]
