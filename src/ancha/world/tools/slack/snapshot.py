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
from itertools import accumulate
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
    """A channel's seeded messages as ``world.json`` lines, in ts order, ids left as slots:
    the text is ``segments[0] slot[0] segments[1] slot[1] ... segments[-1]``."""

    segments: list[bytes]
    """The text between slots."""
    slots: array[int]
    """Byte offset of each slot in the text, ascending."""
    kinds: array[int]
    """Which id each slot takes: an index into ``names``."""
    starts: array[int]
    """Byte offset of each message's line (by ordinal), then the text's length."""
    names: tuple[str, ...]
    """``channel``, ``team``, ``bot_id``, ``app_id`` and ``user:REF``."""

    def segment_start(self, index: int) -> int:
        return self.slots[index - 1] + ID_WIDTH if index else 0


def seeded_text(plan: HistoryPlan, history: ChannelPlan, ids: Ids, bot: User) -> SeededText:
    """Render a channel's seeded history once, with placeholders for every trial's ids."""
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
    pattern = re.compile(b"(\x7f" + tag.encode() + rb"\d{6})")
    pieces = pattern.split(text)
    index = {holder.encode(): i for i, holder in enumerate(holders.values())}
    segments = pieces[::2]
    kinds = array("H", [index[holder] for holder in pieces[1::2]])
    # slot i starts after segments 0..i and the i slots before it
    slots = array("q", (end + i * ID_WIDTH for i, end in enumerate(accumulate(map(len, segments[:-1])))))
    return SeededText(segments, slots, kinds, starts, tuple(names))


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


def fill(text: SeededText, first: int, end: int, values: list[bytes]) -> bytes:
    """Lines of ordinals ``first`` up to ``end`` with this trial's ids, each ending in ``SEPARATOR``."""
    base, stop = text.starts[first], text.starts[end]
    lo, hi = bisect_left(text.slots, base), bisect_left(text.slots, stop)
    head, tail = base - text.segment_start(lo), stop - text.segment_start(hi)
    if lo == hi:
        return text.segments[lo][head:tail]
    parts: list[bytes] = [b""] * (2 * (hi - lo) + 1)
    parts[0] = text.segments[lo][head:]
    parts[1::2] = [values[kind] for kind in text.kinds[lo:hi]]
    parts[2:-1:2] = text.segments[lo + 1:hi]
    parts[-1] = text.segments[hi][:tail]
    return b"".join(parts)


def channel_lines(plan: HistoryPlan, history: ChannelPlan | None, channel: Channel, ids: Ids,
                  bot: User) -> Iterator[bytes]:
    """The channel's messages as ``world.json`` lines in ts order, each ending in ``SEPARATOR``."""
    if history is not None and history.snapshot is None:
        with collector_paused():
            history.snapshot = seeded_text(plan, history, ids, bot)
    text: SeededText | None = history.snapshot if history is not None else None
    values = trial_ids(text, channel, ids) if text is not None else None
    if text is None or values is None:
        for message in (channel.by_key[key] for key in sorted(channel.by_key)):
            yield message_line(message) + SEPARATOR
        return
    if channel.deferred:  # nothing touched it: the seeded history as it was planned
        yield fill(text, 0, len(text.starts) - 1, values)
        return
    run: tuple[int, int] | None = None  # ordinals [first, end) of untouched seeded messages
    for key in sorted(channel.by_key):
        held = channel.by_key.held(key)
        if type(held) is int:
            if run is not None and run[1] == held:
                run = (run[0], held + 1)
                continue
            if run is not None:
                yield fill(text, *run, values)
            run = (held, held + 1)
            continue
        if run is not None:
            yield fill(text, *run, values)
            run = None
        assert isinstance(held, Message)
        yield message_line(held) + SEPARATOR
    if run is not None:
        yield fill(text, *run, values)
