"""Seeded history: planned once per scene, built into a trial's channel when first touched.

Where each seeded message goes (its channel, its ts, its thread) depends on the scene
only, never on the trial: ids drawn from the trial's RNG are those of the team, users and
channels, not of messages. So the plan is worked out once per ``SlackFile`` (every
trial of a scene shares it) and each trial's channel gets a loader (``Channel.defer``)
that gives the channel its keys from the plan the first time anything reads or writes
its messages; each ``Message`` is built when it is first read (``MessageIndex``). A
trial that reads one page of a long history builds one page of messages, and the
messages it builds are exactly those storing the seed one by one would have made.

Seeded messages without ``at`` are spaced a minute apart, in seed order, ending a minute
before ``clock.start``; a reply comes after its thread's parent; two messages of a
channel never share a ts (the later one moves on a microsecond).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.models import MICROS, Channel, Message, MessageIndex, ts_str
from ancha.world.tools.slack.scene_file import SlackFile
from ancha.world.tools.slack.seeded import NO_TIME, SeededMessages

SPACING_S = 60
T = TypeVar("T")


@dataclass(slots=True)
class ChannelPlan:
    """One channel's seeded history, in ts order."""

    order: array[int]
    """Positions (in the seed) in ts order; a message's index here is its ordinal."""
    ordinals: dict[int, int]
    """ts key -> ordinal."""
    top: list[int]
    """ts keys of the top-level messages, ascending (what conversations.history pages)."""
    replies: dict[int, list[int]]
    """Position of a thread's top message -> its replies' ts keys, ascending."""
    repliers: dict[int, list[str]]
    """Position of a thread's top message -> bare refs of who replied, in seed order, once each."""
    snapshot: Any = None
    """The channel's messages as ``world.json`` text with slots for a trial's ids, made the
    first time a trial's snapshot needs it (``snapshot.SeededText``; False when a message holds
    a DEL byte, and each trial renders the channel from its messages)."""


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """Every seeded message placed (the same in every trial), as columns by seed position."""

    seeded: SeededMessages
    channel: array[int]
    """Index in ``world.channels`` of each message's channel (a reply's is its thread's)."""
    key: array[int]
    """Each message's ts in microseconds."""
    root: array[int]
    """Position of a reply's thread's top message; ``NO_ROOT`` for a top-level message."""
    reactions: dict[int, tuple[tuple[str, tuple[str, ...]], ...]]
    """Position -> (emoji without colons, bare user refs), in seed order."""
    channels: dict[int, ChannelPlan]
    """Channel index -> its history (channels without seeded messages have none)."""
    with_ref: list[int]
    """Positions of messages that declare a ref, in seed order."""

    def ts(self, position: int) -> str:
        return ts_str(self.key[position])


NO_ROOT = -1


def plan_history(world: SlackFile, start: int) -> HistoryPlan:
    """The placed history of ``world`` for ``clock.start`` = ``start`` (epoch seconds), worked
    out once and kept on ``world``; ``ValueError`` when a seed names nothing."""
    plan = world._histories.get(start)
    if plan is None:
        with collector_paused():
            plan = world._histories[start] = _plan(world, start)
    return plan  # type: ignore[no-any-return]


def _plan(world: SlackFile, start: int) -> HistoryPlan:
    seeded = world.seeded
    users = {world.bot.ref: world.bot.ref} | {u.ref: u.ref for u in world.users if u.ref}
    channels = {c.ref: i for i, c in enumerate(world.channels) if c.ref}
    # every name the messages give, checked once: a long history names a few, many times
    channel_of = [-1] * len(seeded.names)
    for index in dict.fromkeys(seeded.channel):
        channel_of[index] = resolve(channels, seeded.names[index], f"message {seeded.channel.index(index) + 1} channel")
    for index in dict.fromkeys(seeded.author):
        resolve(users, seeded.names[index], f"message {seeded.author.index(index) + 1} from")
    undated = sum(1 for at in seeded.at if at == NO_TIME)
    seen: dict[str, int] = {}
    taken: dict[int, set[int]] = {}
    count = len(seeded)
    channel, key, root_of = array("I", bytes(4 * count)), array("q", bytes(8 * count)), array("q", [NO_ROOT]) * count
    by_channel: dict[int, list[int]] = {}
    reactions: dict[int, tuple[tuple[str, tuple[str, ...]], ...]] = {}
    for i in range(count):
        where = channel_of[seeded.channel[i]]
        root = NO_ROOT
        parent_ref = seeded.thread_of.get(i)
        if parent_ref:
            parent = seen.get(parent_ref)
            if parent is None:
                raise ValueError(f"slack message {i + 1}: thread_of {parent_ref!r} names no earlier message")
            top = root_of[parent]
            root = parent if top == NO_ROOT else top
            where = channel[root]
        at = seeded.at[i]
        if at != NO_TIME:
            ts = max(at, 0)  # a ts is never negative
        else:
            undated -= 1
            ts = (start - SPACING_S * (undated + 1)) * MICROS
        if root != NO_ROOT and ts <= key[root]:
            ts = key[root] + 1
        keys = taken.get(where)
        if keys is None:
            keys = taken[where] = set()
        while ts in keys:
            ts += 1
        keys.add(ts)
        channel[i], key[i], root_of[i] = where, ts, root
        by_channel.setdefault(where, []).append(i)
        ref = seeded.ref.get(i)
        if ref:
            seen[ref] = i
        emoji = seeded.reactions.get(i)
        if emoji:
            reactions[i] = tuple((name.strip(":"), tuple(resolve(users, r, f"message {i + 1} reaction") for r in refs))
                                 for name, refs in emoji.items())
    with_ref = sorted(seeded.ref)
    histories = {index: _channel(seeded, key, root_of, positions) for index, positions in by_channel.items()}
    return HistoryPlan(seeded, channel, key, root_of, reactions, histories, with_ref)


def _channel(seeded: SeededMessages, key: array[int], root_of: array[int], positions: list[int]) -> ChannelPlan:
    """A channel's history from its messages' positions, in seed order."""
    order = array("I", sorted(positions, key=key.__getitem__))
    replies: dict[int, list[int]] = {}
    repliers: dict[int, list[str]] = {}
    for position in positions:  # seed order: who replied first is listed first, as Slack does
        root = root_of[position]
        if root != NO_ROOT:
            replies.setdefault(root, []).append(key[position])
            names = repliers.setdefault(root, [])
            author = seeded.author_of(position)
            if author not in names:
                names.append(author)
    for keys in replies.values():
        keys.sort()
    in_order = [key[p] for p in order]  # one int object per ts, shared by ordinals and top
    top = [k for k, p in zip(in_order, order, strict=True) if root_of[p] == NO_ROOT]
    return ChannelPlan(order, dict(zip(in_order, range(len(in_order)), strict=True)), top, replies, repliers)


@dataclass(frozen=True, slots=True)
class Ids:
    """One trial's ids of what seeded messages name."""

    team: str
    users: Mapping[str, str]
    """Bare user ref -> user id."""
    bot_user: str
    bot_id: str | None
    app_id: str | None
    bot_profile: Callable[[], dict[str, object]]
    """A new ``bot_profile`` object for each message the bot wrote."""


def build_message(plan: HistoryPlan, history: ChannelPlan, ordinal: int, channel_id: str, ids: Ids) -> Message:
    """The seeded message at ``ordinal`` of a channel, as a trial with ``ids`` holds it: the
    same message, replies and thread fields included, that storing the seed one message at
    a time would give."""
    position = history.order[ordinal]
    seeded = plan.seeded
    user_id = ids.users[seeded.author_of(position)]
    key = plan.key[position]
    message = Message(channel_id, key, user_id, seeded.text[position], team=ids.team, seeded=True)
    root = plan.root[position]
    if root != NO_ROOT:
        message.thread_ts = ts_str(plan.key[root])
        message.parent_user_id = ids.users[seeded.author_of(root)]
    elif position in history.replies:
        message.thread_ts = message.ts
        message.reply_keys = list(history.replies[position])
        message.reply_users = [ids.users[ref] for ref in history.repliers[position]]
    if user_id == ids.bot_user:
        message.bot_id, message.app_id = ids.bot_id, ids.app_id
        message.bot_profile = ids.bot_profile()
    for emoji, refs in plan.reactions.get(position, ()):
        message.reactions[emoji] = [ids.users[ref] for ref in refs]
    files = seeded.files.get(position)
    if files:
        message.files = list(files)
    return message


@dataclass(frozen=True, slots=True)
class SeededView:
    """A seeded message nobody touched, as a check reads it: the fields a ``Message`` would
    have, without building one (a check over a long history reads every message)."""

    channel: str
    key: int
    user: str
    text: str
    thread_ts: str | None
    seeded: bool = True
    blocks: None = None
    attachments: None = None

    @property
    def ts(self) -> str:
        return ts_str(self.key)


class HistoryLoader:
    """Gives one trial's channels their seeded history from the shared plan, on first use."""

    def __init__(self, plan: HistoryPlan, ids: Ids) -> None:
        self.plan = plan
        self.ids = ids
        self.channels: dict[str, ChannelPlan] = {}
        """Channel id -> its seeded history, for channels that have one."""

    def defer(self, channel: Channel, index: int) -> None:
        """Give ``channel`` (``world.channels[index]``) its seeded history when first touched."""
        if index in self.plan.channels:
            self.channels[channel.id] = self.plan.channels[index]
            channel.defer(lambda target: self.fill(target, index))

    def view(self, channel_id: str, ordinal: int) -> SeededView:
        """The seeded message at ``ordinal`` of a channel, read without building it."""
        history, plan = self.channels[channel_id], self.plan
        position = history.order[ordinal]
        root = plan.root[position]
        if root != NO_ROOT:
            thread_ts: str | None = ts_str(plan.key[root])
        else:
            thread_ts = ts_str(plan.key[position]) if position in history.replies else None
        return SeededView(channel_id, plan.key[position], self.ids.users[plan.seeded.author_of(position)],
                          plan.seeded.text[position], thread_ts)

    def fill(self, channel: Channel, index: int) -> None:
        """The channel's seeded history: its keys now, each message when first read."""
        history = self.plan.channels[index]

        def build(ordinal: int) -> Message:
            return build_message(self.plan, history, ordinal, channel.id, self.ids)

        channel.seed(list(history.top), MessageIndex(dict(history.ordinals), build), history)


def resolve(ids: dict[str, T], ref: str, where: str) -> T:
    """What the bare name of ``ref`` (``$kind.name`` -> ``name``) maps to in ``ids``."""
    ref = ref.removeprefix("$").split(".")[-1]
    if ref not in ids:
        known = ", ".join(sorted(ids)) or "none"
        raise ValueError(f"slack {where}: {ref!r} names nothing here (known: {known})")
    return ids[ref]

