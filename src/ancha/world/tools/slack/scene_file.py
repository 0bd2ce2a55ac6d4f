"""``world.slack`` in scene files: its models, and how the section resolves (declaring refs,
reading ``messages_file``, resolving refs and times).

One set of models serves both forms: the file walker checks what is written against them,
and ``build_world`` validates the same classes from the resolved data (refs bare, times
absolute, ``messages_file`` read into ``messages``), from which the replica is built."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FieldSerializationInfo,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_serializer,
    field_validator,
)
from pydantic.json_schema import SkipJsonSchema

from ancha.config.validation import INVALID, FileModel, Walker, _unsafe_number, file_fields, join
from ancha.scene.file_model import Ref, RefName, Time
from ancha.scene.folder import SceneFileRefused, json_lines
from ancha.scene.refs import Declared, RefTable, bare
from ancha.scene.sections import SectionContext
from ancha.scene.sources import Source, one_unit_offset, parse_time
from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.seeded import NO_TIME, SeededMessages
from ancha.world.tools.slack.seeded import micros as micros_of


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
    person: SkipJsonSchema[str | None] = None
    """Resolved only (a scene built by hand): the person this user is. A file links them from
    the person instead (``unsupported_fields``), and the schema does not show it."""


class SlackChannelFile(_File):
    ref: RefName | None = None
    name: str
    private: bool = False
    topic: str | None = None
    purpose: str | None = None
    members: list[Ref] = Field(default_factory=list)
    """User refs; the bot's ref makes the bot a member."""
    archived: bool = False


class SlackMessageFile(_File):
    ref: RefName | None = None
    channel: Ref
    """Channel ref."""
    from_: Ref = Field(alias="from")
    """User ref (a seeded user or the bot)."""
    text: str = ""
    at: Time | None = None
    """Resolved: absolute (read back from JSON by ``SeededMessages``); None: the replica spaces
    seeded messages out before clock.start, in order."""
    thread_of: Ref | None = None
    """Message ref of the thread parent."""
    reactions: dict[str, list[Ref]] = Field(default_factory=dict)
    """emoji name -> user refs."""
    files: list[dict[str, Any]] = Field(default_factory=list)


class SlackIncomingWebhookFile(_File):
    ref: RefName
    """Names the webhook: its URL is the context's ``tools.slack.webhooks.<ref>``."""
    channel: Ref
    """Channel ref: where its posts go."""
    app: str | None = None
    """The app it belongs to, the name its posts show; none: the scene's bot (the agent's app)."""


class SlackFile(_File):
    team: SlackTeamFile = Field(default_factory=SlackTeamFile)
    bot: SlackBotFile = Field(default_factory=SlackBotFile)
    users: list[SlackUserFile] = Field(default_factory=list)
    channels: list[SlackChannelFile] = Field(default_factory=list)
    messages: list[SlackMessageFile] = Field(default_factory=SeededMessages)  # type: ignore[arg-type]
    """Resolved: inline messages followed by those of ``messages_file``, in file order, packed
    (``SeededMessages``, which serializes as this list)."""
    messages_file: str | None = Field(default=None, description="JSONL file beside the scene, one message a line")
    """Resolved: None (its messages are read into ``messages``)."""
    incoming_webhooks: list[SlackIncomingWebhookFile] = Field(
        default_factory=list, description="incoming webhook URLs that post to a channel as an app")
    """Each gets a ``hooks.slack.com/services/T/B/X`` URL of the world's secrets (``incoming_webhooks.py``)."""
    rate_limits: Literal["off", "real"] = Field(
        default="off", description="real: the agent's calls get Slack's per-method rate limits (429 ratelimited)")
    """``real``: the agent's calls are held to Slack's per-method rate limits (``rate_limits.py``)."""

    _histories: dict[int, Any] = PrivateAttr(default_factory=dict)
    """clock.start -> the placed history (``history.HistoryPlan``) every trial shares."""

    @field_validator("messages", mode="wrap")
    @classmethod
    def _packed(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        # Packed, never a model per message: a 200,000-line history would cost ~1 KB a line.
        return SeededMessages.coerce(value)

    @field_serializer("messages", mode="wrap")
    def _as_list(self, value: Any, handler: SerializerFunctionWrapHandler, info: FieldSerializationInfo) -> Any:
        return value.dump(info) if isinstance(value, SeededMessages) else handler(value)

    @property
    def seeded(self) -> SeededMessages:
        """The resolved messages, packed."""
        return cast(SeededMessages, self.messages)


# --- resolving ------------------------------------------------------------------------

TOOL = "slack"


def read_messages_file(name: str, ctx: SectionContext, seeded: SeededPacker) -> bytes:
    """Pack the messages of a JSONL file beside the scene (read through ``ctx.read_file``:
    inside the scene's folder, a regular file, capped), each line validated on its own and
    packed as it is read, so no object per line outlives its line."""
    data = ctx.read_file(name, "world.slack.messages_file")
    if data is None:
        return b""
    display = str(Path(ctx.display_dir) / name) if ctx.display_dir else name
    scene = ctx.source
    before = len(seeded.seeded)
    for number, record in json_lines(data):
        if type(record) is dict and record.keys() <= _PLAIN_KEYS and seeded.add_plain(record):
            continue
        clean = _well_formed(record)
        if clean is None:  # a problem somewhere: the walker finds each one, with its path
            if isinstance(record, SceneFileRefused):
                Source(display, _fixed_line(number), scene.problems).add("", record.message, record.hint)
                continue
            walker = Walker(SlackMessageFile, display)
            clean = walker.section(record, SlackMessageFile, "", number)
            scene.problems.extend(walker.problems)
            if clean is INVALID:
                continue
        seeded.add(clean, "", Source(display, _fixed_line(number), scene.problems))
    if len(seeded.seeded) > before:
        seeded.from_file = display
    return data


_ATTRIBUTES = {key: name for key, (name, _) in file_fields(SlackMessageFile).items()}
"""Keys a line may use (``from``) -> attribute names (``from_``)."""
_TEXT_KEYS = frozenset(("channel", "from", "text", "at", "thread_of"))
"""Keys whose fields take any string: a line of only these, all strings, is well formed."""
_STR = frozenset((str,))
_PLAIN_KEYS = frozenset(("channel", "from", "text", "at"))
"""A line of only these keys may take ``SeededPacker.add_plain``."""


def _well_formed(record: Any) -> dict[str, Any] | None:
    """The fast path for a line without problems: its fields keyed by attribute name, as the
    walker would give them; None when anything is off (the walker then reports it)."""
    if type(record) is not dict:
        return None
    if record.keys() <= _TEXT_KEYS and {*map(type, record.values())} <= _STR:
        if "channel" not in record or "from" not in record:
            return None
    elif not record.keys() <= _ATTRIBUTES.keys() or not record.keys().isdisjoint(SlackMessageFile.unsupported_fields):
        return None
    else:
        try:
            SlackMessageFile.model_validate(record, strict=True)
        except ValidationError:
            return None
        if record.get("files") and _unsafe_number(record["files"]):
            return None
    return {_ATTRIBUTES[key]: value for key, value in record.items()}


def _fixed_line(number: int) -> Callable[[str], int | None]:
    return lambda _path: number


def _build(model: type[BaseModel], data: dict[str, Any]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError:  # a required field was invalid: already reported by the walker
        return None


def build_world(clean: dict[str, Any], ctx: SectionContext) -> SlackFile:
    """``world.slack``: declare every ref, resolve them, and pack the messages (inline, then
    ``messages_file``'s) as they are read."""
    with collector_paused():
        world = _world(clean, ctx.source, ctx.refs)
        seeded = SeededPacker(ctx.refs, ctx.start)
        for i, data in enumerate(clean.get("messages", [])):
            if data is not None:  # None: invalid, already reported
                seeded.add(data, f"world.slack.messages[{i}]", ctx.source)
        if clean.get("messages_file"):
            jsonl = read_messages_file(clean["messages_file"], ctx, seeded)
            ctx.digest.update(jsonl)
            if seeded.from_file:
                ctx.files.setdefault(seeded.from_file, ctx.scene_dir / clean["messages_file"])
        world.messages = seeded.finish()  # type: ignore[assignment]  # packed: stands for the list
        return world


def world_json(seed: BaseModel) -> dict[str, Any]:
    """``world.slack`` as the scene keeps it: JSON, but for the messages, kept as packed
    (``SeededMessages`` serializes as their JSON list wherever the scene is dumped)."""
    assert isinstance(seed, SlackFile)
    body = seed.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"messages"})
    body["messages"] = seed.seeded
    return body


def _world(clean: dict[str, Any], scene: Source, refs: RefTable) -> SlackFile:
    """The team, bot, users and channels, their refs declared and resolved (messages come next)."""
    base = "world.slack"
    bot = _build(SlackBotFile, clean.get("bot", {})) or SlackBotFile()
    refs.declare(bot.ref, Declared("user", scene.line_of(f"{base}.bot.ref"), tool=TOOL),
                 scene.reporter(f"{base}.bot.ref"))
    users: list[SlackUserFile] = []
    for i, data in enumerate(clean.get("users", [])):
        if data is None:  # invalid: already reported
            continue
        user = _build(SlackUserFile, data)
        if user is not None:
            users.append(user)
            _declare(refs, user.ref, "user", scene, f"{base}.users[{i}].ref")
    channel_data = [(i, d) for i, d in enumerate(clean.get("channels", [])) if d is not None]
    for i, data in channel_data:
        _declare(refs, data.get("ref"), "channel", scene, f"{base}.channels[{i}].ref")
    channels: list[SlackChannelFile] = []
    for i, data in channel_data:
        path = f"{base}.channels[{i}]"
        members = [refs.resolve(m, "user", scene.reporter(f"{path}.members[{j}]"), tool=TOOL)
                   for j, m in enumerate(data.get("members", []))]
        channel = _build(SlackChannelFile, {**data, "members": [m for m in members if m]})
        if channel is not None:
            channels.append(channel)
    return SlackFile(team=_build(SlackTeamFile, clean.get("team", {})) or SlackTeamFile(), bot=bot, users=users,
                      channels=channels, incoming_webhooks=_webhooks(clean, scene, refs),
                      rate_limits=clean.get("rate_limits") or "off")


def _webhooks(clean: dict[str, Any], scene: Source, refs: RefTable) -> list[SlackIncomingWebhookFile]:
    """The incoming webhooks, each ref declared (kind ``webhook``) and its channel ref resolved."""
    hooks: list[SlackIncomingWebhookFile] = []
    for i, data in enumerate(clean.get("incoming_webhooks", [])):
        if data is None:  # invalid: already reported
            continue
        path = f"world.slack.incoming_webhooks[{i}]"
        _declare(refs, data.get("ref"), "webhook", scene, f"{path}.ref")
        channel = refs.resolve(data.get("channel"), "channel", scene.reporter(f"{path}.channel"), tool=TOOL)
        hook = _build(SlackIncomingWebhookFile, {**data, "channel": channel}) if channel else None
        if hook is not None:
            hooks.append(hook)
    return hooks


def _declare(refs: RefTable, name: object, kind: str, source: Source, path: str, index: int = 0,
             channel: str | None = None) -> None:
    if isinstance(name, str):
        extra = {"channel": channel} if channel else {}
        refs.declare(name, Declared(kind, source.line_of(path), index, extra, tool=TOOL), source.reporter(path))


class SeededPacker:
    """Resolves each seeded message's refs and time as it is read and packs it into
    ``SeededMessages``. Channel, ``from`` and reaction refs name users and channels, declared
    before any message; a message's own ref is declared as it is read, and ``thread_of``
    refs are resolved at the end, once every message ref is declared. A message with a
    problem is packed anyway: the scene is refused for the problem."""

    def __init__(self, refs: RefTable, start: datetime) -> None:
        self.refs = refs
        self.start = start
        self.seeded = SeededMessages()
        self.from_file: str | None = None
        """The displayed name of ``messages_file`` once a line of it is packed."""
        self._resolved: dict[str, dict[str, str]] = {"channel": {}, "user": {}}
        """Kind -> text -> name of refs that resolved without a problem: a long history
        resolves each ref once."""
        self._start_micros = micros_of(start)
        self._threads: list[tuple[int, str, str, Source]] = []
        """(position, thread_of as written, path prefix, source) of each reply."""

    def add(self, data: dict[str, Any], prefix: str, source: Source) -> None:
        """Pack one message's walked fields (attribute names as keys), read at ``prefix`` of ``source``."""
        position = len(self.seeded)
        ref = data.get("ref")
        if isinstance(ref, str):  # most messages of a long history have none
            _declare(self.refs, ref, "message", source, join(prefix, "ref"), position, bare(data.get("channel")))
        channel = self._ref(data.get("channel"), "channel", source, prefix, "channel") or ""
        author = self._ref(data.get("from_"), "user", source, prefix, "from") or ""
        if data.get("thread_of") is not None:
            self._threads.append((position, data["thread_of"], prefix, source))
        reactions: dict[str, list[str]] = {}
        for emoji, users in (data.get("reactions") or {}).items():
            names = [self.refs.resolve(u, "user", source.reporter(join(join(join(prefix, "reactions"), emoji), j)),
                                       tool=TOOL) for j, u in enumerate(users)]
            reactions[emoji] = [n for n in names if n]
        at = data.get("at")
        if at is not None:
            try:
                at = parse_time(at, self.start)
            except (ValueError, OverflowError) as exc:
                source.add(join(prefix, "at"), str(exc), "write an ISO time, or -3d for three days before clock.start")
                at = None
        self.seeded.add(channel, author, data.get("text", ""), at, ref=ref if isinstance(ref, str) else None,
                        reactions=reactions or None, files=data.get("files") or None)

    def add_plain(self, record: dict[str, Any]) -> bool:
        """Pack a line of only ``channel``, ``from``, ``text`` and ``at``, all strings, whose
        refs resolved before and whose ``at`` is a one-unit offset (``-90m``): most lines of
        a long history, packed without the general path's objects. False when the line is
        anything else; the general path then reads it (and reports what is wrong)."""
        channel_text, author_text = record.get("channel"), record.get("from")
        if type(channel_text) is not str or type(author_text) is not str:
            return False
        channel = self._resolved["channel"].get(channel_text)
        author = self._resolved["user"].get(author_text)
        text = record.get("text", "")
        at = record.get("at")
        if channel is None or author is None or type(text) is not str:
            return False
        if at is None:
            micros = NO_TIME
        else:
            seconds = one_unit_offset(at) if type(at) is str else None
            if seconds is None:
                return False
            micros = self._start_micros + seconds * 1_000_000
        self.seeded.add_plain(channel, author, text, micros)
        return True

    def finish(self) -> SeededMessages:
        """The packed messages, each reply's ``thread_of`` resolved (every message ref is declared now)."""
        for position, written, prefix, source in self._threads:
            parent = self.refs.resolve(written, "message", source.reporter(join(prefix, "thread_of")), tool=TOOL)
            if parent is None:
                continue
            channel = self.seeded.channel_of(position)
            parent_channel = self.refs.records[parent].extra.get("channel")
            if parent_channel is not None and channel and parent_channel != channel:
                source.add(join(prefix, "thread_of"), f"${parent} is in channel ${parent_channel}, not ${channel}",
                           "a reply must be in the same channel as its thread's parent")
            self.seeded.thread_of[position] = parent
        return self.seeded

    def _ref(self, text: object, kind: str, source: Source, prefix: str, key: str) -> str | None:
        """The bare name ``text`` (the field ``key`` under ``prefix``) points at; None if it is
        None, or wrong (reported)."""
        if text is None:
            return None
        known = self._resolved[kind].get(text) if isinstance(text, str) else None
        if known is not None:
            return known
        name = self.refs.resolve(text, kind, source.reporter(join(prefix, key)), tool=TOOL)
        if name is not None and isinstance(text, str):
            self._resolved[kind][text] = name
        return name
