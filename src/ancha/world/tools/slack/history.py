"""Seeded history: planned once per scene, built into a trial's channel when first touched.

Where each seeded message goes (its channel, its ts, its thread) depends on the scene
only, never on the trial: ids drawn from the trial's RNG are those of the team, users and
channels, not of messages. So the plan is worked out once per ``SlackWorld`` (every
trial of a scene shares it) and each trial's channel gets a loader (``Channel.defer``)
that builds that channel's ``Message`` objects from the plan the first time anything
reads or writes its messages. A trial that never opens a channel never copies its
history, and the messages it builds are exactly those the trial would have built eagerly.

Seeded messages without ``at`` are spaced a minute apart, in seed order, ending a minute
before ``clock.start``; a reply comes after its thread's parent; two messages of a
channel never share a ts (the later one moves on a microsecond).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from ancha.world.tools.slack.models import MICROS, Channel, Message, SlackState, User, ts_str
from ancha.world.tools.slack.scene_models import SlackMessage, SlackWorld

SPACING_S = 60
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_MICROSECOND = timedelta(microseconds=1)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """Every seeded message placed, with each channel's in seed order."""

    messages: list[Planned]
    by_channel: dict[int, list[int]]
    """Channel index -> positions in ``messages``, in seed order."""
    with_ref: list[int]
    """Positions of messages that declare a ref, in seed order."""


def plan_history(world: SlackWorld, start: int) -> HistoryPlan:
    """The placed history of ``world`` for ``clock.start`` = ``start`` (epoch seconds), worked
    out once and kept on ``world``; ``ValueError`` when a seed names nothing."""
    plan = world._histories.get(start)
    if plan is None:
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
    for i, seeded in enumerate(world.messages):
        where = f"message {i + 1}"
        channel = resolve(channels, seeded.channel, f"{where} channel")
        author = resolve(users, seeded.from_, f"{where} from")
        root: int | None = None
        if seeded.thread_of:
            parent = seen.get(seeded.thread_of)
            if parent is None:
                raise ValueError(f"slack {where}: thread_of {seeded.thread_of!r} names no earlier message")
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
        keys = taken.setdefault(channel, set())
        while key in keys:
            key += 1
        keys.add(key)
        reactions = tuple((emoji.strip(":"), tuple(resolve(users, r, f"{where} reaction") for r in refs))
                          for emoji, refs in seeded.reactions.items())
        by_channel.setdefault(channel, []).append(len(messages))
        if seeded.ref:
            seen[seeded.ref] = len(messages)
            with_ref.append(len(messages))
        messages.append(Planned(seeded, channel, key, author, root, reactions))
    return HistoryPlan(messages, by_channel, with_ref)


class HistoryLoader:
    """Builds one trial's seeded messages of a channel from the shared plan, on first use."""

    def __init__(self, plan: HistoryPlan, state: SlackState, users: dict[str, str], bot: User,
                 bot_profile: Callable[[], dict[str, object]]) -> None:
        self.plan = plan
        self.state = state
        self.users = users
        """Bare user ref -> this trial's user id."""
        self.bot = bot
        self.bot_profile = bot_profile
        """A new ``bot_profile`` object for each message the bot wrote."""

    def defer(self, channel: Channel, index: int) -> None:
        """Give ``channel`` (``world.channels[index]``) its seeded history when first touched."""
        if self.plan.by_channel.get(index):
            channel.defer(lambda target: self.fill(target, index))

    def fill(self, channel: Channel, index: int) -> None:
        team = self.state.team["id"]
        made: dict[int, Message] = {}
        for position in self.plan.by_channel.get(index, []):
            planned = self.plan.messages[position]
            parent = made[planned.root] if planned.root is not None else None
            user_id = self.users[planned.author]
            message = Message(channel.id, planned.key, user_id, planned.seed.text, team=team,
                              thread_ts=parent.ts if parent else None, seeded=True)
            if user_id == self.bot.id:
                message.bot_id, message.app_id = self.bot.bot_id, self.bot.app_id
                message.bot_profile = self.bot_profile()
            for emoji, refs in planned.reactions:
                message.reactions[emoji] = [self.users[r] for r in refs]
            if planned.seed.files:
                message.files = list(planned.seed.files)
            self.state.add_message(message, parent)
            made[position] = message


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
