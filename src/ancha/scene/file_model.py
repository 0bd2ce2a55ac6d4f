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
_LATER_STATE = ("github.file_at", "github.pull", "github.production", "github.issue", "github.permission",
                "datadog.monitor", "datadog.downtime", "pagerduty.incident", "okta.user", "fault_resolved")


_LATER_PREDICATES = ("issue_labeled", "pull_merged", "fault_resolved")
_LATER_ACTIONS = ("github.comment", "github.review", "github.merge", "github.commit", "github.issue",
                  "datadog.monitor", "datadog.event", "datadog.log", "pagerduty.trigger", "pagerduty.acknowledge",
                  "pagerduty.resolve", "okta.user")

Person = Annotated[str, Expect("a person such as laura, $laura or $person.laura")]
FactName = Annotated[str, Expect("a fact such as laura.workspace")]
Offset = Annotated[str, Expect("a duration from clock.start such as 30m or -1h")]
TextPatterns = Annotated[list[str], Expect("a list of patterns (substrings, or /regex/)")]


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


class MessageSelectorFile(_File):
    """Which messages written during the trial count; at least one field."""

    to: Person | None = Field(default=None, description="a person the message reaches")
    in_: Ref | None = Field(default=None, alias="in", description="a Slack channel ref")
    in_thread_of: Ref | None = Field(default=None, description="a Slack message ref: replies in its thread")
    from_: Annotated[str, Expect("a user ref such as $slack_bot, or a person")] | None = Field(
        default=None, alias="from")
    text_contains: Annotated[str | list[str], Expect("a string or a list of strings")] | None = None
    fact: FactName | None = Field(default=None, description="the message told its recipient this fact")


class MessageCheckFile(MessageSelectorFile):
    count_gte: Annotated[int, Field(gt=0)] = 1


class PredicateFile(_File):
    """A condition on the world, timestamped the first time it holds; exactly one field."""

    unsupported_fields: ClassVar[dict[str, str]] = {
        **_later(tuple(k for k in _LATER_STATE if k != "fault_resolved"), "the {name} state check"),
        **_later(_LATER_PREDICATES, "the {name} predicate")}
    called: Annotated[str, Expect('a pattern such as "POST /api/chat.postMessage"')] | None = None
    message: MessageSelectorFile | None = None
    decided: list[str] | None = None
    knows: list[str] | None = None
    told: list[str] | None = None
    revealed: list[FactName] | None = None
    slack_message: SlackMessageStateFile | None = Field(default=None, alias="slack.message")
    all: list[PredicateFile] | None = None
    any: list[PredicateFile] | None = None
    not_: PredicateFile | None = Field(default=None, alias="not")


class WithinFile(_File):
    event: PredicateFile
    of: Annotated[Literal["start"] | PredicateFile, Expect("start, or a milestone such as { called: ... }")] = \
        "start"
    limit: Annotated[str, DurationText()]


class CheckFile(_File):
    id: str
    trace: TraceFile | None = None
    state: StateFile | None = None
    judge: str | None = None
    revealed: list[FactName] | None = None
    knows: list[str] | None = Field(default=None, description="[person, person.fact, ...]")
    told: list[str] | None = Field(default=None, description="[person, person.fact, ...]")
    decided: list[str] | None = Field(default=None, description="[person, decision] or [person, decision, option]")
    message: MessageCheckFile | None = None
    never: MessageSelectorFile | None = None
    before: list[PredicateFile] | None = None
    within: WithinFile | None = None


# --- people ---------------------------------------------------------------------------


class AccountsFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(("github", "pagerduty", "okta"), "a {name} account")
    slack: Ref | None = None


class AwayFile(_File):
    from_: Offset = Field(alias="from")
    to: Offset


class FactFile(_File):
    text: str
    asked_by: TextPatterns = Field(default_factory=list)
    match: TextPatterns | None = Field(default=None, description="default: [text]")


class DecisionFile(_File):
    asked_by: TextPatterns = Field(default_factory=list)
    options: list[str]
    chooses: str
    needs: list[FactName] = Field(default_factory=list)
    text: str = Field(default="Let's go with {option}.", description="{option} is replaced by the choice")
    pending: str = "I can't decide that yet."


class PersonFile(_File):
    name: str | None = Field(default=None, description="display name; default: the person's key")
    accounts: AccountsFile = Field(default_factory=AccountsFile)
    listens: list[Ref] = Field(default_factory=list)
    replies_after: Annotated[str, Expect('a duration such as 2m, or a range such as "1m..5m"')] = "1m"
    away: list[AwayFile] = Field(default_factory=list)
    facts: dict[str, FactFile] = Field(default_factory=dict)
    decisions: dict[str, DecisionFile] = Field(default_factory=dict)
    otherwise: str | None = None
    voice: Literal["scene", "model"] = "scene"


# --- world rules -------------------------------------------------------------------------


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


class ActionFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(_LATER_ACTIONS, "the {name} action")
    slack_message: SlackMessageActionFile | None = Field(default=None, alias="slack.message")
    slack_reaction: SlackReactionActionFile | None = Field(default=None, alias="slack.reaction")


class EventFile(_File):
    at: Offset | None = None
    after: PredicateFile | None = None
    delay: Annotated[str | None, DurationText()] = Field(default=None, description="with after; default 0s")
    unless: PredicateFile | None = None
    do: list[ActionFile]


class WorldRulesFile(_File):
    unsupported_fields: ClassVar[dict[str, str]] = _later(("faults",), "world_rules.{name}")
    events: list[EventFile] = Field(default_factory=list)


class SceneFile(_File):
    """One scene.yaml."""

    name: str | None = None
    description: str = ""
    task: str = ""
    clock: ClockFile = Field(default_factory=ClockFile)
    world: WorldFile = Field(default_factory=WorldFile)
    people: dict[str, PersonFile] = Field(default_factory=dict)
    world_rules: WorldRulesFile = Field(default_factory=WorldRulesFile)
    checks: list[CheckFile] = Field(default_factory=list)
    pass_: list[str] | None = Field(default=None, alias="pass")
