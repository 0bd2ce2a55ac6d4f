"""Seeded history: planned once per scene, built into a trial's channel when first touched.

Where each seeded message goes (its channel, its ts, its thread) depends on the scene
only, never on the trial: ids drawn from the trial's RNG are those of the team, users and
channels, not of messages. So the plan is worked out once per ``SlackWorld`` (every
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

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from ancha.world.tools.slack.bulk import collector_paused
from ancha.world.tools.slack.models import MICROS, Channel, Message, MessageIndex, ts_str
from ancha.world.tools.slack.scene_models import SlackMessage, SlackWorld

SPACING_S = 60
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_MICROSECOND = timedelta(microseconds=1)
T = TypeVar("T")


@dataclass(slots=True)
class Planned:
    """One seeded message, placed: the same in every trial."""

    seed: SlackMessage
    channel: int
    """Index of its channel in ``world.channels``."""
    key: int
    """Its ts in microseconds."""
    author: str
    """Bare user ref of ``from``."""
    root: int | None
    """Position (in ``HistoryPlan.messages``) of its thread's top message, for a reply."""
    reactions: tuple[tuple[str, tuple[str, ...]], ...]
    """(emoji without colons, bare user refs), in seed order."""

    @property
    def ts(self) -> str:
        return ts_str(self.key)


@dataclass(slots=True)
class ChannelPlan:
    """One channel's seeded history, in ts order."""

    order: list[int]
    """Positions (in ``HistoryPlan.messages``) in ts order; a message's index here is its ordinal."""
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
    first time a trial's snapshot needs it (``snapshot.SeededText``)."""


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """Every seeded message placed, and each channel's history."""

    messages: list[Planned]
    channels: dict[int, ChannelPlan]
    """Channel index -> its history (channels without seeded messages have none)."""
    with_ref: list[int]
    """Positions of messages that declare a ref, in seed order."""


def plan_history(world: SlackWorld, start: int) -> HistoryPlan:
    """The placed history of ``world`` for ``clock.start`` = ``start`` (epoch seconds), worked
    out once and kept on ``world``; ``ValueError`` when a seed names nothing."""
    plan = world._histories.get(start)
    if plan is None:
        with collector_paused():
            plan = world._histories[start] = _plan(world, start)
    return plan  # type: ignore[no-any-return]


def _plan(world: SlackWorld, start: int) -> HistoryPlan:
    users = {world.bot.ref: world.bot.ref} | {u.ref: u.ref for u in world.users if u.ref}
    channels = {c.ref: i for i, c in enumerate(world.channels) if c.ref}
    undated = sum(1 for m in world.messages if m.at is None)
    seen: dict[str, int] = {}
    taken: dict[int, set[int]] = {}
    messages: list[Planned] = []
    by_channel: dict[int, list[int]] = {}
    with_ref: list[int] = []
    channel_of: dict[str, int] = {}
    """Each ``channel`` a message names -> its index: a long history names a few, many times."""
    user_of: dict[str, str] = {}
    for i, seeded in enumerate(world.messages):
        channel = channel_of.get(seeded.channel)
        if channel is None:
            channel = channel_of[seeded.channel] = resolve(channels, seeded.channel, f"message {i + 1} channel")
        author = user_of.get(seeded.from_)
        if author is None:
            author = user_of[seeded.from_] = resolve(users, seeded.from_, f"message {i + 1} from")
        root: int | None = None
        if seeded.thread_of:
            parent = seen.get(seeded.thread_of)
            if parent is None:
                raise ValueError(f"slack message {i + 1}: thread_of {seeded.thread_of!r} names no earlier message")
            top = messages[parent].root
            root = parent if top is None else top
            channel = messages[root].channel
        if seeded.at is not None:
            key = _key(seeded.at)
        else:
            undated -= 1
            key = (start - SPACING_S * (undated + 1)) * MICROS
        if root is not None and key <= messages[root].key:
            key = messages[root].key + 1
        keys = taken.get(channel)
        if keys is None:
            keys = taken[channel] = set()
        while key in keys:
            key += 1
        keys.add(key)
        reactions = tuple((emoji.strip(":"), tuple(resolve(users, r, f"message {i + 1} reaction") for r in refs))
                          for emoji, refs in seeded.reactions.items()) if seeded.reactions else ()
        by_channel.setdefault(channel, []).append(len(messages))
        if seeded.ref:
            seen[seeded.ref] = len(messages)
            with_ref.append(len(messages))
        messages.append(Planned(seeded, channel, key, author, root, reactions))
    return HistoryPlan(messages, {index: _channel(messages, positions) for index, positions in by_channel.items()},
                       with_ref)


def _channel(messages: list[Planned], positions: list[int]) -> ChannelPlan:
    """A channel's history from its messages' positions, in seed order."""
    order = sorted(positions, key=lambda p: messages[p].key)
    replies: dict[int, list[int]] = {}
    repliers: dict[int, list[str]] = {}
    for position in positions:  # seed order: who replied first is listed first, as Slack does
        planned = messages[position]
        if planned.root is not None:
            replies.setdefault(planned.root, []).append(planned.key)
            names = repliers.setdefault(planned.root, [])
            if planned.author not in names:
                names.append(planned.author)
    for keys in replies.values():
        keys.sort()
    return ChannelPlan(order, {messages[p].key: i for i, p in enumerate(order)},
                       [messages[p].key for p in order if messages[p].root is None], replies, repliers)


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
    planned = plan.messages[position]
    user_id = ids.users[planned.author]
    message = Message(channel_id, planned.key, user_id, planned.seed.text, team=ids.team, seeded=True)
    if planned.root is not None:
        root = plan.messages[planned.root]
        message.thread_ts = ts_str(root.key)
        message.parent_user_id = ids.users[root.author]
    elif position in history.replies:
        message.thread_ts = message.ts
        message.reply_keys = list(history.replies[position])
        message.reply_users = [ids.users[ref] for ref in history.repliers[position]]
    if user_id == ids.bot_user:
        message.bot_id, message.app_id = ids.bot_id, ids.app_id
        message.bot_profile = ids.bot_profile()
    for emoji, refs in planned.reactions:
        message.reactions[emoji] = [ids.users[ref] for ref in refs]
    if planned.seed.files:
        message.files = list(planned.seed.files)
    return message


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

    def fill(self, channel: Channel, index: int) -> None:
        """The channel's seeded history: its keys now, each message when first read."""
        history = self.plan.channels[index]

        def build(ordinal: int) -> Message:
            return build_message(self.plan, history, ordinal, channel.id, self.ids)

        channel.seed(list(history.top), MessageIndex(dict(history.ordinals), build))


def resolve(ids: dict[str, T], ref: str, where: str) -> T:
    """What the bare name of ``ref`` (``$kind.name`` -> ``name``) maps to in ``ids``."""
    ref = ref.removeprefix("$").split(".")[-1]
    if ref not in ids:
        known = ", ".join(sorted(ids)) or "none"
        raise ValueError(f"slack {where}: {ref!r} names nothing here (known: {known})")
    return ids[ref]


def _key(at: datetime) -> int:
    """``at`` in microseconds since the epoch; 0 before the epoch (a ts is never negative)."""
    return max(((at if at.tzinfo else at.replace(tzinfo=UTC)) - EPOCH) // ONE_MICROSECOND, 0)
