"""Slack's part of ``world.json`` as JSON text, with seeded history shared across trials.

A trial's snapshot holds every message of every channel. Seeded messages nobody touched
are the same in every trial but for ids drawn from the trial's RNG (team, users, channel,
bot), and every such id is a capital letter and 10 hex digits. So the first snapshot of
a scene renders each channel's seeded history once, with a placeholder of that width for
each id (``SeededText``), and every trial copies that text and writes its own ids over
the placeholders. Messages a trial built (read, changed, wrote) are rendered from the
trial's own ``Message`` objects, in ts order among the others.
"""

from __future__ import annotations

import re
import secrets
from array import array
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.history import ChannelPlan, HistoryPlan, Ids, build_message
from ancha.world.tools.slack.models import Channel, Message, User, _encode
from ancha.world.tools.slack.seed import bot_profile

ID_WIDTH = 11
"""Every id Ancha makes for Slack: a letter and 10 hex digits (``seed.new_id``); a
placeholder (DEL, a tag random to the process, 6 digits) is as wide."""
SEPARATOR = b",\n"


def message_fields(message: Message) -> dict[str, Any]:
    """One message of ``world.json``: Slack's wire shape, its channel, and where it came from."""
    return {**message.to_dict(), "channel": message.channel, "seeded": message.seeded, "actor": message.actor}


def message_line(message: Message) -> bytes:
    return _encode(message_fields(message)).encode()


@dataclass(frozen=True, slots=True)
class SeededText:
    """A channel's seeded messages as ``world.json`` lines, in ts order, with a placeholder
    (``ID_WIDTH`` bytes) wherever a trial's id goes: one bytes object, and where its slots are."""

    text: bytes
    slots: array[int]
    """Byte offset of each placeholder in ``text``, ascending."""
    kinds: array[int]
    """Which id each slot takes: an index into ``names``."""
    starts: array[int]
    """Byte offset of each message's line (by ordinal), then the text's length."""
    names: tuple[str, ...]
    """``channel``, ``team``, ``bot_id``, ``app_id`` and ``user:REF``."""
    holders: tuple[bytes, ...]
    """The placeholder of each name. They are the only DEL bytes in ``text`` (else the
    channel has no ``SeededText``), so replacing them touches nothing a message says."""


def seeded_text(plan: HistoryPlan, history: ChannelPlan, ids: Ids, bot: User) -> SeededText | None:
    """Render a channel's seeded history once, with placeholders for every trial's ids; None
    when a message itself holds a DEL byte (the channel is then rendered from its messages)."""
    tag = secrets.token_hex(2)
    names = ["channel", "team", "bot_id", "app_id", *(f"user:{ref}" for ref in ids.users)]
    holders = {name: f"\x7f{tag}{i:06d}" for i, name in enumerate(names)}
    probe_bot = User(holders.get(f"user:{bot.ref}", bot.id), holders["team"], bot.name, is_bot=True,
                     bot_id=holders["bot_id"], app_id=holders["app_id"], updated=bot.updated)
    probe = Ids(holders["team"], {ref: holders[f"user:{ref}"] for ref in ids.users}, probe_bot.id,
                probe_bot.bot_id, probe_bot.app_id, lambda: bot_profile(probe_bot, holders["team"]))
    text = b"".join(_lines(plan, history, holders["channel"], probe, tag))
    starts = array("q", [0])
    starts.extend(found.end() for found in re.finditer(b"\n", text))  # JSON text has no raw newline
    index = {holder.encode(): i for i, holder in enumerate(holders.values())}
    slots, kinds = array("q"), array("H")
    for found in re.finditer(b"\x7f" + tag.encode() + rb"\d{6}", text):
        slots.append(found.start())
        kinds.append(index[found.group()])
    if text.count(b"\x7f") != len(slots):
        return None
    return SeededText(text, slots, kinds, starts, tuple(names), tuple(index))


def _lines(plan: HistoryPlan, history: ChannelPlan, channel: str, ids: Ids, tag: str,
           batch: int = 5000) -> Iterator[bytes]:
    """``message_line`` of each seeded message of the channel, each followed by ``SEPARATOR``,
    encoded ``batch`` at a time in one call (a marker between them shows where each ends)."""
    marker = f"\x7f{tag}-next"
    between, last = f',"{marker}",', f',"{marker}"]'
    for first in range(0, len(history.order), batch):
        items: list[Any] = []
        for ordinal in range(first, min(first + batch, len(history.order))):
            items += (message_fields(build_message(plan, history, ordinal, channel, ids)), marker)
        encoded = _encode(items)
        assert encoded.endswith(last)
        yield (encoded[1:-len(last)].replace(between, ",\n") + ",\n").encode()


def trial_ids(text: SeededText, channel: Channel, ids: Ids) -> list[bytes] | None:
    """What each slot name holds in this trial; None if an id is not ``ID_WIDTH`` wide (then
    the channel is rendered from its messages instead)."""
    values = {"channel": channel.id, "team": ids.team, "bot_id": ids.bot_id or "", "app_id": ids.app_id or ""}
    found = [(values[name] if not name.startswith("user:") else ids.users.get(name[5:], "")).encode()
             for name in text.names]
    return found if all(len(value) == ID_WIDTH for value in found) else None


PIECE = 1 << 20
"""About how many bytes of seeded history ``SeededRun`` gives at a time."""


@dataclass(frozen=True, slots=True)
class SeededRun:
    """Seeded messages of ordinals ``first`` up to ``end`` that the trial never touched, as
    ``world.json`` lines with the trial's ids: made only from text every trial shares and
    the trial's ids, so it can be written out after the state has moved on."""

    text: SeededText
    first: int
    end: int
    values: tuple[bytes, ...]

    def pieces(self, last: bool = False) -> Iterator[bytes]:
        """The lines, each ending in ``SEPARATOR`` (but the very last when ``last``), about
        ``PIECE`` bytes (whole lines) at a time."""
        text, first = self.text, self.first
        while first < self.end:
            stop = min(max(bisect_left(text.starts, text.starts[first] + PIECE, first + 1), first + 1), self.end)
            base, limit = text.starts[first], text.starts[stop]
            if last and stop == self.end:
                limit -= len(SEPARATOR)
            piece = text.text[base:limit]
            for kind in set(text.kinds[bisect_left(text.slots, base):bisect_left(text.slots, limit)]):
                piece = piece.replace(text.holders[kind], self.values[kind])
            yield piece
            first = stop


Line = bytes | SeededRun
"""A channel's part of ``world.json``: one message's line, or a run of untouched seeded lines."""


def channel_lines(plan: HistoryPlan, history: ChannelPlan | None, channel: Channel, ids: Ids,
                  bot: User) -> list[Line]:
    """The channel's messages as ``world.json`` lines in ts order, each ending in
    ``SEPARATOR``, as the channel holds them now: messages the trial built are rendered
    here, untouched seeded ones are left as ``SeededRun``s to write out later."""
    if history is not None and history.snapshot is None:
        with collector_paused():
            history.snapshot = seeded_text(plan, history, ids, bot) or False  # False: render each message
    text: SeededText | None = history.snapshot or None if history is not None else None
    values = trial_ids(text, channel, ids) if text is not None else None
    if text is None or values is None:
        return [message_line(channel.by_key[key]) + SEPARATOR for key in sorted(channel.by_key)]
    found = tuple(values)
    if channel.deferred:  # nothing touched it: the seeded history as it was planned
        return [SeededRun(text, 0, len(text.starts) - 1, found)]
    lines: list[Line] = []
    run: tuple[int, int] | None = None  # ordinals [first, end) of untouched seeded messages
    for key in sorted(channel.by_key):
        held = channel.by_key.held(key)
        if type(held) is int:
            if run is not None and run[1] == held:
                run = (run[0], held + 1)
                continue
            if run is not None:
                lines.append(SeededRun(text, *run, found))
            run = (held, held + 1)
            continue
        if run is not None:
            lines.append(SeededRun(text, *run, found))
            run = None
        assert isinstance(held, Message)
        lines.append(message_line(held) + SEPARATOR)
    if run is not None:
        lines.append(SeededRun(text, *run, found))
    return lines


def written(lines: list[Line]) -> Iterator[bytes]:
    """``lines`` as text, all but the last ending in ``SEPARATOR`` (a JSON list's items)."""
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        if isinstance(line, SeededRun):
            yield from line.pieces(last)
        else:
            yield line[:-len(SEPARATOR)] if last else line
