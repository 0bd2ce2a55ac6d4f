"""``world.slack`` resolved: declaring refs, reading ``messages_file``, resolving refs and
times; and the Slack bodies of state checks and world-rule actions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ancha.config.validation import INVALID, Walker, _unsafe_number, file_fields, join
from ancha.scene.folder import SceneFileRefused, json_lines
from ancha.scene.predicates import Resolver
from ancha.scene.refs import Declared, RefTable, bare
from ancha.scene.sections import SectionContext
from ancha.scene.sources import Source, parse_time
from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.scene_models import (
    SlackBot,
    SlackChannel,
    SlackMessage,
    SlackMessageAction,
    SlackMessageFile,
    SlackMessageState,
    SlackReactionAction,
    SlackTeam,
    SlackUser,
    SlackWorld,
)

TOOL = "slack"

Entry = tuple[dict[str, Any], str, Source]
"""A message's valid fields, its path prefix and the file it came from."""


def read_messages_file(name: str, ctx: SectionContext) -> tuple[list[Entry], bytes]:
    """Messages of a JSONL file beside the scene (read through ``ctx.read_file``: inside the
    scene's folder, a regular file, capped), each line validated on its own."""
    data = ctx.read_file(name, "world.slack.messages_file")
    if data is None:
        return [], b""
    display = str(Path(ctx.display_dir) / name) if ctx.display_dir else name
    scene = ctx.source
    entries: list[Entry] = []
    for number, record in json_lines(data):
        source = Source(display, _fixed_line(number), scene.problems)
        if isinstance(record, SceneFileRefused):
            source.add("", record.message, record.hint)
            continue
        clean = _well_formed(record)
        if clean is None:  # a problem somewhere: the walker finds each one, with its path
            walker = Walker(SlackMessageFile, display)
            clean = walker.section(record, SlackMessageFile, "", number)
            scene.problems.extend(walker.problems)
        if clean is not INVALID:
            entries.append((clean, "", source))
    return entries, data


_ATTRIBUTES = {key: name for key, (name, _) in file_fields(SlackMessageFile).items()}
"""Keys a line may use (``from``) -> attribute names (``from_``)."""
_TEXT_KEYS = frozenset(("channel", "from", "text", "at", "thread_of"))
"""Keys whose fields take any string: a line of only these, all strings, is well formed."""
_STR = frozenset((str,))


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
    """``world.slack``: read ``messages_file`` if any, declare every ref, resolve them."""
    with collector_paused():
        extra: list[Entry] = []
        if clean.get("messages_file"):
            extra, jsonl = read_messages_file(clean["messages_file"], ctx)
            ctx.digest.update(jsonl)
            if extra:
                ctx.files.setdefault(extra[0][2].file, ctx.scene_dir / clean["messages_file"])
        return build_slack(clean, ctx.source, extra, ctx.refs, ctx.start)


def build_slack(clean: dict[str, Any], scene: Source, extra: list[Entry], refs: RefTable,
                start: datetime) -> SlackWorld:
    """Declare every ref of the Slack seed, then resolve them; problems go to ``scene``."""
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
    entries: list[Entry] = [(d, f"{base}.messages[{i}]", scene) for i, d in enumerate(clean.get("messages", []))
                          if d is not None]
    entries += extra
    for index, (data, prefix, source) in enumerate(entries):
        if isinstance(data.get("ref"), str):  # most messages of a long history have none
            _declare(refs, data["ref"], "message", source, join(prefix, "ref"), index, bare(data.get("channel")))

    channels: list[SlackChannel] = []
    for i, data in channel_data:
        path = f"{base}.channels[{i}]"
        members = [refs.resolve(m, "user", scene.reporter(f"{path}.members[{j}]"), tool=TOOL)
                   for j, m in enumerate(data.get("members", []))]
        channel = _build(SlackChannel, {**data, "members": [m for m in members if m]})
        if channel is not None:
            channels.append(channel)
    return SlackWorld(team=_build(SlackTeam, clean.get("team", {})) or SlackTeam(), bot=bot, users=users,
                      channels=channels, messages=_messages(entries, refs, start))


def _declare(refs: RefTable, name: object, kind: str, source: Source, path: str, index: int = 0,
             channel: str | None = None) -> None:
    if isinstance(name, str):
        extra = {"channel": channel} if channel else {}
        refs.declare(name, Declared(kind, source.line_of(path), index, extra, tool=TOOL), source.reporter(path))


_MESSAGES = TypeAdapter(list[SlackMessage])
_BATCH = 1_000
"""Messages validated in one call: as fast as all at once, without holding all their fields."""


def _messages(entries: list[Entry], refs: RefTable, start: datetime) -> list[SlackMessage]:
    """Each entry with its refs and time resolved, in order; one with a problem is left out."""
    resolved: dict[str, dict[str, str]] = {"channel": {}, "user": {}, "message": {}}
    messages: list[SlackMessage] = []
    for first in range(0, len(entries), _BATCH):
        batch = (_message(entry, refs, start, resolved) for entry in entries[first:first + _BATCH])
        messages += _validated([fields for fields in batch if fields is not None])
    return messages


def _validated(fields: list[dict[str, Any]]) -> list[SlackMessage]:
    """``fields`` as messages, validated in one call (much faster than one by one)."""
    try:
        return _MESSAGES.validate_python(fields)
    except ValidationError:  # a field the walker already reported: leave out just its message
        return [m for m in (_build(SlackMessage, f) for f in fields) if m is not None]


def _message(entry: Entry, refs: RefTable, start: datetime, resolved: dict[str, dict[str, str]]) -> \
        dict[str, Any] | None:
    """The fields of ``entry``'s message with its refs and time resolved; None after a problem.
    ``resolved`` remembers, by kind, text -> name of refs that resolved without a problem, so
    a long history resolves each ref once."""
    data, prefix, source = entry
    channel = _ref(data.get("channel"), "channel", refs, resolved, source, prefix, "channel")
    author = _ref(data.get("from_"), "user", refs, resolved, source, prefix, "from")
    thread_of = data.get("thread_of")
    parent = None if thread_of is None else _ref(thread_of, "message", refs, resolved, source, prefix, "thread_of")
    ok = channel is not None and author is not None and (thread_of is None or parent is not None)
    if parent is not None and channel is not None:
        parent_channel = refs.records[parent].extra.get("channel")
        if parent_channel is not None and parent_channel != channel:
            source.add(join(prefix, "thread_of"), f"${parent} is in channel ${parent_channel}, not ${channel}",
                       "a reply must be in the same channel as its thread's parent")
            ok = False
    reactions: dict[str, list[str]] = {}
    for emoji, users in (data.get("reactions") or {}).items():
        names = [refs.resolve(u, "user", source.reporter(join(join(join(prefix, "reactions"), emoji), j)), tool=TOOL)
                 for j, u in enumerate(users)]
        ok = ok and all(names)
        reactions[emoji] = [n for n in names if n]
    at = data.get("at")
    if at is not None:
        try:
            at = parse_time(at, start)
        except (ValueError, OverflowError) as exc:
            source.add(join(prefix, "at"), str(exc), "write an ISO time, or -3d for three days before clock.start")
            ok = False
    if not ok:
        return None
    return {**data, "channel": channel, "from_": author, "thread_of": parent, "reactions": reactions, "at": at}


def _ref(text: object, kind: str, refs: RefTable, resolved: dict[str, dict[str, str]], source: Source,
         prefix: str, key: str) -> str | None:
    """The bare name ``text`` (the field ``key`` under ``prefix``) points at; None if it is
    None, or wrong (reported)."""
    if text is None:
        return None
    known = resolved[kind].get(text) if isinstance(text, str) else None
    if known is not None:
        return known
    name = refs.resolve(text, kind, source.reporter(join(prefix, key)), tool=TOOL)
    if name is not None and isinstance(text, str):
        resolved[kind][text] = name
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
