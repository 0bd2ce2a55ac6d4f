"""The scene file as written: refs as ``$name`` strings, durations and offsets as text.

These models drive validation (``ancha.config.validation.Walker``) and
``ancha schema scene``; the loader then resolves refs and times into ``Scene``.
Keys of sections built later are refused with "not supported yet", never ignored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints

from ancha.config.validation import DurationText, Expect, FileModel

RefName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]+$"),
                    Expect("a ref name of letters, digits and _")]
Ref = Annotated[str, Field(description="$name or $kind.name")]
Time = Annotated[datetime | str, Expect("an ISO time such as 2026-01-05T09:00:00Z or an offset such as -3d")]
Patterns = Annotated[str | list[str], Expect('a pattern such as "POST /api/chat.postMessage", or a list of them')]

_LATER = "{} is built in a later version of Ancha; remove it to run this scene now"
_PROCESS = ("revealed", "knows", "told", "decided", "message", "never", "before", "within")
_LATER_STATE = ("github.file_at", "github.pull", "github.production", "github.issue", "github.permission",
                "datadog.monitor", "datadog.downtime", "pagerduty.incident", "okta.user", "fault_resolved")


def _later(names: tuple[str, ...], what: str) -> dict[str, str]:
    return {name: _LATER.format(what.format(name=name)) for name in names}


class _File(FileModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ClockFile(_File):
    start: Annotated[datetime | str, Expect("an ISO time such as 2026-01-05T09:00:00Z")] = \
        "2026-01-05T09:00:00Z"
    limit: Annotated[str, DurationText()] = "1h"
    speed: Annotated[float, Field(gt=0)] = 1.0


class SlackTeamFile(_File):
    name: str = "Acme"
    domain: str = "acme"


class SlackBotFile(_File):
    ref: RefName = "slack_bot"
    name: str = "ancha"


class SlackUserFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(("person",), "linking a user to a person")
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


class WorldFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(("github", "datadog", "pagerduty", "okta"),
                                                          "the {name} world")
    slack: SlackFile | None = None


class TraceFile(_File):
    called: Patterns | None = None
    not_called: Patterns | None = None
    status: Literal["any"] | None = None


class SlackMessageStateFile(_File):
    channel: Ref
    from_: Ref | None = Field(default=None, alias="from")
    text_contains: str | None = None
    in_thread_of: Ref | None = None
    count_gte: Annotated[int, Field(gt=0)] = 1


class StateFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(_LATER_STATE, "the {name} state check")
    slack_message: SlackMessageStateFile | None = Field(default=None, alias="slack.message")


class CheckFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(_PROCESS, "the {name} process check")
    id: str
    trace: TraceFile | None = None
    state: StateFile | None = None
    judge: str | None = None


class SceneFile(_File):
    """One scene.yaml."""

    unsupported_fields: ClassVar[dict[str, str]] = _later(("people", "world_rules"), "{name}")
    name: str | None = None
    description: str = ""
    task: str = ""
    clock: ClockFile = Field(default_factory=ClockFile)
    world: WorldFile = Field(default_factory=WorldFile)
    checks: list[CheckFile] = Field(default_factory=list)
    pass_: list[str] | None = Field(default=None, alias="pass")
