"""Slack's search query language, and the messages of a workspace a query matches.

A query is words (each must appear, as a word; ``deploy*`` matches a prefix),
``"quoted phrases"``, ``-excluded`` words, and modifiers: ``in:#channel`` (or ``in:<#C..>``,
``in:@user`` for the DM with them), ``from:@user`` (``from:<@U..>``, ``from:me``),
``before:``/``after:``/``on:`` a ``YYYY-MM-DD`` date. Several ``in:`` (or ``from:``) mean
any of them. Searching reads seeded history where the scene left it, a column of texts
(``history.py``): no ``Message`` is built for a message that does not match.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ancha.world.tools.slack.models import MICROS, Channel, ts_str

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

_DAY = 86400 * MICROS
_PUNCTUATION = ".,;:!?()[]{}'`"
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_CHANNEL_LINK = re.compile(r"<#([CDG][A-Z0-9]+)(?:\|[^>]*)?>")
_USER_LINK = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


@dataclass(slots=True)
class Query:
    words: list[str] = field(default_factory=list)
    prefixes: list[str] = field(default_factory=list)
    phrases: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    channels: list[str] = field(default_factory=list)
    """``in:`` values as written (without ``#``), resolved against the workspace later."""
    users: list[str] = field(default_factory=list)
    """``from:`` values as written (without ``@``)."""
    after: int | None = None
    """Only messages at or after this key (microseconds)."""
    before: int | None = None
    """Only messages before this key."""

    @property
    def terms(self) -> list[str]:
        """What a match must contain, lower-cased (for the score and highlights)."""
        return [*self.words, *self.prefixes, *self.phrases]

    def matches_text(self, text: str) -> int:
        """How many times the text's terms occur (0: the text does not match). A query of
        modifiers only matches every text once."""
        lower = text.lower()
        score = 1
        for word in self.words:
            found = len(re.findall(rf"(?<!\w){re.escape(word)}(?!\w)", lower))
            if not found:
                return 0
            score += found
        for prefix in self.prefixes:
            found = len(re.findall(rf"(?<!\w){re.escape(prefix)}", lower))
            if not found:
                return 0
            score += found
        for phrase in self.phrases:
            found = lower.count(phrase)
            if not found:
                return 0
            score += found
        for word in self.excluded:
            if re.search(rf"(?<!\w){re.escape(word)}(?!\w)", lower):
                return 0
        return score

    def in_time(self, key: int) -> bool:
        return (self.after is None or key >= self.after) and (self.before is None or key < self.before)


def parse(text: str) -> Query:
    """A ``Query`` from what the caller typed; what it cannot read is searched as words."""
    query = Query()
    for phrase, token in _TOKEN.findall(text):
        if phrase:
            if phrase.strip():
                query.phrases.append(" ".join(phrase.lower().split()))
            continue
        name, sep, value = token.partition(":")
        name = name.lower()
        day = _day(value) if sep else None
        if sep and value and name == "in":
            query.channels.append(value.removeprefix("#"))
        elif sep and value and name == "from":
            query.users.append(value.removeprefix("@"))
        elif name in ("before", "after", "on") and day is not None:
            if name == "before":
                query.before = day if query.before is None else min(query.before, day)
            elif name == "after":  # after a day: from the next one on, as Slack reads it
                query.after = day + _DAY if query.after is None else max(query.after, day + _DAY)
            else:
                query.after, query.before = day, day + _DAY
        elif token.startswith("-") and len(token) > 1:
            query.excluded.append(token[1:].lower())
        elif token.endswith("*") and len(token) > 1:
            query.prefixes.append(token[:-1].lower())
        elif token.strip(_PUNCTUATION):
            query.words.append(token.lower().strip(_PUNCTUATION))
    return query


def _day(value: str) -> int | None:
    try:
        day = datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None
    return int(day.timestamp()) * MICROS


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching message, read without building it."""

    channel: Channel
    key: int
    user: str
    text: str
    thread_ts: str | None
    score: int

    @property
    def ts(self) -> str:
        return ts_str(self.key)


def channels_for(replica: SlackReplica, query: Query, user_id: str) -> list[Channel] | None:
    """The conversations ``in:`` names (None: every one); those the searcher cannot see are left out."""
    if not query.channels:
        return None
    state = replica.state
    found: list[Channel] = []
    for value in query.channels:
        link = _CHANNEL_LINK.fullmatch(value)
        user_link = _USER_LINK.fullmatch(value.removeprefix("@"))
        channel: Channel | None
        if link:
            channel = state.channels.get(link.group(1))
        elif value in state.channels:
            channel = state.channels[value]
        elif user_link or _user_id(replica, value) is not None:
            other = user_link.group(1) if user_link else _user_id(replica, value)
            dm_id = state.dms.get(frozenset({user_id, other or ""}))
            channel = state.channels.get(dm_id) if dm_id else None
        else:
            channel = state.channel_named(value.lower())
        if channel is not None and channel not in found:
            found.append(channel)
    return found


def users_for(replica: SlackReplica, query: Query, user_id: str) -> set[str] | None:
    """The user ids ``from:`` names (None: anyone)."""
    if not query.users:
        return None
    found: set[str] = set()
    for value in query.users:
        if value.lower() == "me":
            found.add(user_id)
            continue
        link = _USER_LINK.fullmatch(value)
        found_id = link.group(1) if link else _user_id(replica, value)
        if found_id is not None:
            found.add(found_id)
    return found


def _user_id(replica: SlackReplica, value: str) -> str | None:
    users = replica.state.users
    if value in users:
        return value
    lower = value.lower()
    for user in users.values():
        if lower in (user.name.lower(), user.display_name.lower(), user.real_name.lower()):
            return user.id
    return None


def hits(replica: SlackReplica, channel: Channel, query: Query, users: set[str] | None) -> Iterator[Hit]:
    """The messages of ``channel`` that match, in ts order. A channel whose seeded history
    nobody touched is read from the scene's shared plan, without filling it in."""
    history = replica.history
    plan = history.channels.get(channel.id)
    if channel.deferred and plan is not None:
        shared = history.plan
        texts, keys, roots = shared.seeded.text, shared.key, shared.root
        ids = history.ids.users
        for position in plan.order:
            key = keys[position]
            if not query.in_time(key):
                continue
            score = query.matches_text(texts[position])
            if not score:
                continue
            user = ids[shared.seeded.author_of(position)]
            if users is not None and user not in users:
                continue
            root = roots[position]
            thread_ts = ts_str(keys[root]) if root >= 0 else ts_str(key) if position in plan.replies else None
            yield Hit(channel, key, user, texts[position], thread_ts, score)
        return
    for message in replica.messages_as_read(channel.id):
        if not query.in_time(message.key) or (users is not None and message.user not in users):
            continue
        score = query.matches_text(message.text)
        if score:
            yield Hit(channel, message.key, message.user, message.text, message.thread_ts, score)


def highlight(text: str, query: Query) -> str:
    """The text with each matched term wrapped in Slack's highlight markers (U+E000, U+E001)."""
    for term in sorted(query.terms, key=len, reverse=True):
        text = re.sub(f"({re.escape(term)})", "\ue000\\1\ue001", text, flags=re.IGNORECASE)
    return text
