"""``world.slack`` in scene files: the file models, the resolved seed, and how one
becomes the other (declaring refs, reading ``messages_file``, resolving refs and times).

Also the Slack bodies of checks and world rules: the ``slack.message`` state check and
the ``slack.message`` / ``slack.reaction`` actions, as written and resolved.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ancha.config.validation import Expect, FileModel
from ancha.scene.file_model import Ref, RefName, Time
from ancha.world.tools.slack.seeded import SeededMessages

# --- resolved (refs bare, times absolute) ---------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


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
    messages: SeededMessages = Field(default_factory=SeededMessages)
    """Inline messages followed by those of ``messages_file``, in file order (a list of
    ``SlackMessage`` when written as JSON)."""
    rate_limits: Literal["off", "real"] = "off"
    """``real``: the agent's calls are held to Slack's per-method rate limits (``rate_limits.py``)."""

    _histories: dict[int, Any] = PrivateAttr(default_factory=dict)
    """clock.start -> the placed history (``history.HistoryPlan``) every trial shares."""


class SlackMessageState(_Model):
    channel: str
    from_: str | None = Field(default=None, alias="from")
    text_contains: str | None = None
    in_thread_of: str | None = None
    count_gte: int = 1


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


# --- as written -----------------------------------------------------------------------


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class SlackTeamFile(_File):
    name: str = "Acme"
    domain: str = "acme"


class SlackBotFile(_File):
    ref: RefName = "slack_bot"
    name: str = "ancha"


class SlackUserFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = {
        "person": "link the user from its person instead: people.<name>.accounts.slack: $ref"}
    ref: RefName | None = None
    name: str
    real_name: str | None = None
    email: str | None = None
    title: str | None = None
    tz: str | None = None
    is_admin: bool = False
    deleted: bool = False


class SlackChannelFile(_File):
    ref: RefName | None = None
    name: str
    private: bool = False
    topic: str | None = None
    purpose: str | None = None
    members: list[Ref] = Field(default_factory=list)
    archived: bool = False


class SlackMessageFile(_File):
    ref: RefName | None = None
    channel: Ref
    from_: Ref = Field(alias="from")
    text: str = ""
    at: Time | None = None
    thread_of: Ref | None = None
    reactions: dict[str, list[Ref]] = Field(default_factory=dict)
    files: list[dict[str, Any]] = Field(default_factory=list)


class SlackFile(_File):
    team: SlackTeamFile = Field(default_factory=SlackTeamFile)
    bot: SlackBotFile = Field(default_factory=SlackBotFile)
    users: list[SlackUserFile] = Field(default_factory=list)
    channels: list[SlackChannelFile] = Field(default_factory=list)
    messages: list[SlackMessageFile] = Field(default_factory=list)
    messages_file: str | None = Field(default=None, description="JSONL file beside the scene, one message a line")
    rate_limits: Literal["off", "real"] = Field(
        default="off", description="real: the agent's calls get Slack's per-method rate limits (429 ratelimited)")


class SlackMessageStateFile(_File):
    channel: Ref
    from_: Ref | None = Field(default=None, alias="from")
    text_contains: str | None = None
    in_thread_of: Ref | None = None
    count_gte: Annotated[int, Field(gt=0)] = 1


class SlackMessageActionFile(_File):
    channel: Ref
    from_: Ref = Field(alias="from")
    text: str
    thread_of: Ref | None = None


class SlackReactionActionFile(_File):
    channel: Ref
    message: Ref
    from_: Ref = Field(alias="from")
    name: Annotated[str, Expect("an emoji name such as eyes")]
