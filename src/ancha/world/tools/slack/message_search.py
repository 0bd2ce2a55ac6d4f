"""Slack's search query language, and the messages of a workspace a query matches.

A query is words (each must appear, as a word; ``deploy*`` matches a prefix),
``"quoted phrases"``, ``-excluded`` words, and modifiers: ``in:#channel`` (or ``in:<#C..>``,
``in:@user`` for the DM with them), ``from:@user`` (``from:<@U..>``, ``from:me``),
``before:``/``after:``/``on:`` a ``YYYY-MM-DD`` date. Several ``in:`` (or ``from:``) mean
any of them. Searching reads seeded history where the scene left it, a column of texts
(``history.py``): no ``Message`` is built for a message that does not match.

A query longer than the shared bound (``ancha.world.kernel.query_limits``) is Slack's
``invalid_arguments``. Within it, matching stays linear in the message and the terms: a
message's words are counted once, and each term (deduplicated) is a look-up in them; only
terms holding punctuation run a regex, compiled once per query.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING

from ancha.world.kernel.query_limits import TOO_LONG, too_long
from ancha.world.tools.slack import errors
from ancha.world.tools.slack.models import MICROS, Channel, ts_str

if TYPE_CHECKING:
    from ancha.world.tools.slack.replica import SlackReplica

_DAY = 86400 * MICROS
_PUNCTUATION = ".,;:!?()[]{}'`"
_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_CHANNEL_LINK = re.compile(r"<#([CDG][A-Z0-9]+)(?:\|[^>]*)?>")
_USER_LINK = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_WORD = re.compile(r"\w+")


def _is_word(term: str) -> bool:
    """A term of word characters only: its whole-word occurrences are the message's equal words."""
    return _WORD.fullmatch(term) is not None


@dataclass(slots=True)
class _Term:
    """One distinct term: how often the query names it, and how a message is searched for it."""

    text: str
    times: int
    pattern: re.Pattern[str] | None
    """None for a term of word characters only: its whole-word occurrences (or, as a
    prefix, its occurrences at a word's start) are the message's words equal to it (or
    starting with it), so it is looked up among them instead."""
    parts: tuple[str, ...] = ()
    """The term's words, for a term with punctuation."""

    def count(self, lower: str, words: Counter[str], prefix: bool = False) -> int:
        if self.pattern is not None:
            # Cheap refusals first: each word inside a term with punctuation is a whole word
            # of any message it occurs in (the last one only begins one, for a prefix).
            parts = self.parts[:-1] if prefix else self.parts
            if self.text not in lower or any(part not in words for part in parts):
                return 0
            return len(self.pattern.findall(lower))
        if prefix:
            return sum(n for word, n in words.items() if word.startswith(self.text))
        return words[self.text]


def _terms(texts: list[str], pattern: str) -> list[_Term]:
    counted = Counter(texts)
    return [_Term(text, times, None) if _is_word(text) else
            _Term(text, times, re.compile(pattern.format(re.escape(text))), tuple(_WORD.findall(text)))
            for text, times in counted.items()]


@dataclass
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

    @cached_property
    def highlighters(self) -> list[re.Pattern[str]]:
        """One pattern per distinct term, longest first (compiled once per query)."""
        terms = sorted(dict.fromkeys(self.terms), key=len, reverse=True)
        return [re.compile(f"({re.escape(term)})", re.IGNORECASE) for term in terms]

    @cached_property
    def _compiled(self) -> tuple[list[_Term], list[_Term], frozenset[str], list[_Term], Counter[str]]:
        excluded = _terms(self.excluded, r"(?<!\w){}(?!\w)")
        return (_terms(self.words, r"(?<!\w){}(?!\w)"), _terms(self.prefixes, r"(?<!\w){}"),
                frozenset(t.text for t in excluded if t.pattern is None),
                [t for t in excluded if t.pattern is not None], Counter(self.phrases))

    def matches_text(self, text: str) -> int:
        """How many times the text's terms occur (0: the text does not match). A query of
        modifiers only matches every text once."""
        lower = text.lower()
        words, prefixes, excluded_words, excluded, phrases = self._compiled
        counts = Counter(_WORD.findall(lower)) if words or prefixes or excluded_words or excluded else Counter()
        score = 1
        for terms, prefix in ((words, False), (prefixes, True)):
            for term in terms:
                found = term.count(lower, counts, prefix)
                if not found:
                    return 0
                score += found * term.times
        for phrase, times in phrases.items():
            found = lower.count(phrase)
            if not found:
                return 0
            score += found * times
        if not excluded_words.isdisjoint(counts):
            return 0
        for term in excluded:
            if term.count(lower, counts):
                return 0
        return score

    def in_time(self, key: int) -> bool:
        return (self.after is None or key >= self.after) and (self.before is None or key < self.before)


def parse(text: str) -> Query:
    """A ``Query`` from what the caller typed; what it cannot read is searched as words. A
    text past the shared query bound is Slack's ``invalid_arguments``."""
    if too_long(text):
        raise errors.InvalidArguments(f"[ERROR] {TOO_LONG} [json-pointer:/query]")
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
    names = _UserNames(replica)
    for value in dict.fromkeys(query.channels):
        link = _CHANNEL_LINK.fullmatch(value)
        user_link = _USER_LINK.fullmatch(value.removeprefix("@"))
        channel: Channel | None
        if link:
            channel = state.channels.get(link.group(1))
        elif value in state.channels:
            channel = state.channels[value]
        elif user_link or names.find(value) is not None:
            other = user_link.group(1) if user_link else names.find(value)
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
    names = _UserNames(replica)
    for value in dict.fromkeys(query.users):
        if value.lower() == "me":
            found.add(user_id)
            continue
        link = _USER_LINK.fullmatch(value)
        found_id = link.group(1) if link else names.find(value)
        if found_id is not None:
            found.add(found_id)
    return found


class _UserNames:
    """A user id by id, name, display name or real name (case-insensitive): the first user
    holding the name wins. The index is made on the first look-up of a search, so a query
    of many ``in:``/``from:`` values reads the users once, not once per value."""

    def __init__(self, replica: SlackReplica) -> None:
        self.users = replica.state.users
        self.by_name: dict[str, str] | None = None

    def find(self, value: str) -> str | None:
        if value in self.users:
            return value
        if self.by_name is None:
            self.by_name = {}
            for user in self.users.values():
                for name in (user.name, user.display_name, user.real_name):
                    self.by_name.setdefault(name.lower(), user.id)
        return self.by_name.get(value.lower())


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
    for pattern in query.highlighters:
        text = pattern.sub("\ue000\\1\ue001", text)
    return text
