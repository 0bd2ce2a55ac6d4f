"""``world.slack`` resolved: declaring refs, reading ``messages_file``, resolving refs and
times; and the Slack bodies of state checks and world-rule actions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ancha.config.validation import INVALID, Walker, _unsafe_number, file_fields, join
from ancha.scene.folder import SceneFileRefused, json_lines
from ancha.scene.predicates import Resolver
from ancha.scene.refs import Declared, RefTable, bare
from ancha.scene.sections import SectionContext
from ancha.scene.sources import Source, one_unit_offset, parse_time
from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.scene_models import (
    SlackBot,
    SlackChannel,
    SlackMessageAction,
    SlackMessageFile,
    SlackMessageState,
    SlackReactionAction,
    SlackTeam,
    SlackUser,
    SlackWorld,
)
from ancha.world.tools.slack.seeded import NO_TIME, SeededMessages
from ancha.world.tools.slack.seeded import micros as micros_of

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


def build_world(clean: dict[str, Any], ctx: SectionContext) -> SlackWorld:
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
        world.messages = seeded.finish()
        return world


def world_json(seed: BaseModel) -> dict[str, Any]:
    """``world.slack`` as the scene keeps it: JSON, but for the messages, kept as packed
    (``SeededMessages`` serializes as their JSON list wherever the scene is dumped)."""
    assert isinstance(seed, SlackWorld)
    body = seed.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"messages"})
    body["messages"] = seed.messages
    return body


def _world(clean: dict[str, Any], scene: Source, refs: RefTable) -> SlackWorld:
    """The team, bot, users and channels, their refs declared and resolved (messages come next)."""
    base = "world.slack"
    bot = _build(SlackBot, clean.get("bot", {})) or SlackBot()
    refs.declare(bot.ref, Declared("user", scene.line_of(f"{base}.bot.ref"), tool=TOOL),
                 scene.reporter(f"{base}.bot.ref"))
    users: list[SlackUser] = []
    for i, data in enumerate(clean.get("users", [])):
        if data is None:  # invalid: already reported
            continue
        user = _build(SlackUser, data)
        if user is not None:
            users.append(user)
            _declare(refs, user.ref, "user", scene, f"{base}.users[{i}].ref")
    channel_data = [(i, d) for i, d in enumerate(clean.get("channels", [])) if d is not None]
    for i, data in channel_data:
        _declare(refs, data.get("ref"), "channel", scene, f"{base}.channels[{i}].ref")
    channels: list[SlackChannel] = []
    for i, data in channel_data:
        path = f"{base}.channels[{i}]"
        members = [refs.resolve(m, "user", scene.reporter(f"{path}.members[{j}]"), tool=TOOL)
                   for j, m in enumerate(data.get("members", []))]
        channel = _build(SlackChannel, {**data, "members": [m for m in members if m]})
        if channel is not None:
            channels.append(channel)
    return SlackWorld(team=_build(SlackTeam, clean.get("team", {})) or SlackTeam(), bot=bot, users=users,
                      channels=channels, rate_limits=clean.get("rate_limits") or "off")


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


# --- bodies of checks and world rules ---------------------------------------------------


def _refs(body: dict[str, Any], path: str, resolver: Resolver, fields: tuple[tuple[str, str], ...]) -> \
        dict[str, Any] | None:
    """``fields`` ((attribute, kind), ...) of ``body`` resolved to bare refs; None if one is wrong."""
    resolved: dict[str, Any] = {}
    ok = True
    for field, kind in fields:
        if body.get(field) is None:
            continue
        name = resolver.refs.resolve(body[field], kind, resolver.source.reporter(join(path, field.rstrip("_"))),
                                     tool=None if kind == "message" else TOOL)
        ok = ok and name is not None
        resolved[field] = name
    return resolved if ok else None


def resolve_message_state(body: dict[str, Any], path: str, resolver: Resolver) -> SlackMessageState | None:
    """A ``slack.message`` state body with its refs resolved."""
    resolved = _refs(body, path, resolver, (("channel", "channel"), ("from_", "user"), ("in_thread_of", "message")))
    if resolved is None or resolved.get("channel") is None:
        return None
    return SlackMessageState.model_validate({**resolved, "count_gte": body.get("count_gte", 1),
                                             "text_contains": body.get("text_contains")})


def _in_channel(fields: dict[str, Any], names: tuple[str, ...], path: str, resolver: Resolver) -> bool:
    for field in names:
        target = fields.get(field)
        where = resolver.refs.records[target].extra.get("channel") if target else None
        if where is not None and where != fields["channel"]:
            resolver.add(join(path, field), f"${target} is in channel ${where}, not ${fields['channel']}",
                         "the message must be in the action's channel")
            return False
    return True


def resolve_message_action(body: dict[str, Any], path: str, resolver: Resolver) -> SlackMessageAction | None:
    fields = _refs(body, path, resolver, (("channel", "channel"), ("from_", "user"), ("thread_of", "message")))
    if fields is None or fields.get("channel") is None or fields.get("from_") is None or body.get("text") is None:
        return None
    if not _in_channel(fields, ("thread_of",), path, resolver):
        return None
    return SlackMessageAction.model_validate({"channel": fields["channel"], "from": fields["from_"],
                                              "text": body["text"], "thread_of": fields.get("thread_of")})


def resolve_reaction_action(body: dict[str, Any], path: str, resolver: Resolver) -> SlackReactionAction | None:
    fields = _refs(body, path, resolver, (("channel", "channel"), ("from_", "user"), ("message", "message")))
    if fields is None or fields.get("channel") is None or fields.get("from_") is None:
        return None
    if fields.get("message") is None or body.get("name") is None:
        return None
    if not _in_channel(fields, ("message",), path, resolver):
        return None
    return SlackReactionAction.model_validate({"channel": fields["channel"], "message": fields["message"],
                                               "from": fields["from_"], "name": body["name"].strip(":")})
