"""Logs: the seeded lines (indexed once per scene, shared by its trials), lines added during
a trial (the intake API, world rules, faults' log streams), and search over both.

The seeded index holds the lines sorted by time with posting lists (positions, ascending)
per service, status and host. A search bisects the time range, starts from the smallest
posting list the query's exact terms allow, tests each candidate in sort order and stops
once a page is full, so its cost follows the page, not the number of lines. Lines added
during a trial are few and kept sorted by (time, seq) beside it; the two are merged.

A fault's ``datadog.log`` effect is a stream: its lines are at ``start + k * every`` until
the fault resolves, materialized when logs are read (never by timers on the clock).
"""

from __future__ import annotations

import base64
import bisect
import json
import struct
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ancha.world.kernel import bounded_json
from ancha.world.tools.datadog.log_query import (
    NOT,
    WORD,
    Clause,
    Hints,
    LogLine,
    Match,
    normal_status,
    words_of,
)
from ancha.world.tools.datadog.wire import iso_millis_z

ADDED_SEQ = 1 << 40
_SET_ALGEBRA_MAX = 4096
"""Up to this many candidates, clauses are combined as sets; beyond, checked per line as read."""
"""Seqs of lines added during a trial start here (seeded lines use their position)."""
MAX_STREAM_LINES = 100_000
"""A stream stops materializing past this many lines (a fault left on for a very long time)."""


def log_id(line: LogLine) -> str:
    """A stable id in Datadog's shape (base64 of the time and the sequence)."""
    if line._id is None:
        raw = struct.pack(">QQ", int(line.at * 1000), line.seq)
        line._id = "AQAAAZ" + base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return line._id


def wire(line: LogLine) -> dict[str, Any]:
    """The v2 ``Log`` object."""
    attributes: dict[str, Any] = {
        "attributes": line.attributes,
        "message": line.message,
        "service": line.service,
        "status": line.status,
        "tags": line.tags,
        "timestamp": iso_millis_z(line.at),
    }
    if line.host is not None:
        attributes["host"] = line.host
    return {"id": log_id(line), "type": "log", "attributes": attributes}


def _line(item: dict[str, Any], seq: int) -> LogLine:
    return LogLine(
        float(item["at"]),
        seq,
        str(item.get("service") or ""),
        str(item.get("status") or "info"),
        item.get("host"),
        str(item.get("message") or ""),
        item.get("attributes") or {},
        list(item.get("tags") or []),
        item.get("ref"),
    )


SEARCH_BUDGET = 1_000_000
"""Term tests one search may make (lines tested x the query's cost per line, a wildcard term
counting 4): a few tenths of a second at most. A query of a few terms scans a few hundred
thousand lines; one of 700 negated wildcards, which no index narrows, stops after a few
hundred instead of holding every environment of the server for a minute. A search that runs
out answers what it found with ``meta.status: timeout``, as Datadog does."""


class _Budget:
    """Lines a search may still test."""

    __slots__ = ("left", "spent")

    def __init__(self, lines: int) -> None:
        self.left = lines
        self.spent = False

    def take(self) -> bool:
        """One more line; True when none was left (the search stops there)."""
        if self.left <= 0:
            self.spent = True
            return True
        self.left -= 1
        return False


class SeededLogs:
    """The seed's lines, sorted by time, with posting lists; never changed after building."""

    def __init__(self, logs: list[dict[str, Any]]) -> None:
        order = sorted(range(len(logs)), key=lambda i: float(logs[i]["at"]))
        self.lines: list[LogLine] = [_line(logs[i], pos) for pos, i in enumerate(order)]
        self.times: list[float] = [line.at for line in self.lines]
        postings: dict[tuple[str, str], list[int]] = defaultdict(list)
        for pos, line in enumerate(self.lines):
            postings[("service", line.service.lower())].append(pos)
            postings[("status", line.status)].append(pos)
            if line.host is not None:
                postings[("host", line.host.lower())].append(pos)
        self.postings = dict(postings)
        self._sets: dict[tuple[str, str], frozenset[int]] = {}
        self._words: dict[str, list[int]] | None = None
        """Word -> positions of the lines whose message has it: made on the first free-text search."""
        """Posting lists as sets, made on first use (a clause that is not the driver)."""
        self.by_ref = {line.ref: line for line in self.lines if line.ref}

    def __len__(self) -> int:
        return len(self.lines)

    def candidates(self, hints: Hints, lo: int, hi: int, ascending: bool) -> Any:
        """Positions in [lo, hi) worth testing, in sort order: those of the clause with the
        fewest lines, less those outside any other clause."""
        positive = [clause for clause in hints if not clause[0][0].startswith(NOT)]
        excluded = [
            self._members((clause[0][0].removeprefix(NOT), clause[0][1]))
            for clause in hints
            if clause[0][0].startswith(NOT)
        ]
        if not positive:
            ordered: Any = range(lo, hi) if ascending else range(hi - 1, lo - 1, -1)
            others: list[Clause] = []
        else:
            sized = sorted(positive, key=lambda clause: sum(len(self._posting(pair)) for pair in clause))
            driver, others = sized[0], sized[1:]
            slices = []
            for pair in driver:
                posting = self._posting(pair)
                slices.append(posting[bisect.bisect_left(posting, lo) : bisect.bisect_left(posting, hi)])
            positions = slices[0] if len(slices) == 1 else sorted(set().union(*slices))
            ordered = positions if ascending else reversed(positions)
        members = [[self._members(pair) for pair in clause] for clause in others]
        if not members and not excluded:
            return ordered
        if positive and len(positions) <= _SET_ALGEBRA_MAX:
            # Set algebra in C over the driver's positions, each step at most their number; a
            # larger driver is filtered lazily instead, so a page stops at its first matches.
            keep = set(positions)
            for clause in members:
                keep = set().union(*(keep.intersection(m) for m in clause))
            for m in excluded:
                keep = keep.difference(m)
            return sorted(keep, reverse=not ascending)
        return (
            pos
            for pos in ordered
            if all(any(pos in m for m in clause) for clause in members)
            and not any(pos in m for m in excluded)
        )

    def _members(self, pair: tuple[str, str]) -> frozenset[int]:
        found = self._sets.get(pair)
        if found is None:
            found = frozenset(self._posting(pair))
            if found:  # only values the index has: queries for absent words would grow it forever
                self._sets[pair] = found
        return found

    def _posting(self, pair: tuple[str, str]) -> list[int]:
        """The positions, in time order, of the lines with this exact value (or message word)."""
        if pair[0] != WORD:
            return self.postings.get(pair, [])
        if self._words is None:
            words: dict[str, list[int]] = defaultdict(list)
            for pos, line in enumerate(self.lines):
                for word in dict.fromkeys(words_of(line.lower)):
                    words[word].append(pos)
            self._words = dict(words)
        return self._words.get(pair[1], [])


@dataclass(slots=True)
class LogStream:
    """A fault's log effect: lines at ``start + k * every`` until ``end``."""

    key: str
    service: str
    status: str
    message: str
    every: float
    start: float
    host: str | None = None
    attributes: dict[str, Any] | None = None
    end: float | None = None
    emitted: int = 0


def encode_cursor(key: tuple[float, int]) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": [key[0], key[1]]}).encode()).decode().rstrip("=")


def decode_cursor(text: str) -> tuple[float, int] | None:
    try:
        data = bounded_json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        at, seq = data["after"]
        return float(at), int(seq)
    except (ValueError, KeyError, TypeError):
        return None


class LogStore:
    """One trial's logs: the shared seeded index plus what the trial added."""

    def __init__(self, seeded: SeededLogs) -> None:
        self.seeded = seeded
        self.added: list[LogLine] = []
        self._added_keys: list[tuple[float, int]] = []
        self.streams: list[LogStream] = []
        self._next_seq = ADDED_SEQ

    def add(self, item: dict[str, Any]) -> LogLine:
        line = _line(item, self._next_seq)
        self._next_seq += 1
        i = bisect.bisect_right(self._added_keys, line.key)
        self._added_keys.insert(i, line.key)
        self.added.insert(i, line)
        return line

    def start_stream(self, stream: LogStream) -> None:
        self.streams.append(stream)

    def stop_stream(self, key: str, at: float) -> None:
        for stream in self.streams:
            if stream.key == key and stream.end is None:
                self._materialize(stream, at)
                stream.end = at

    def catch_up(self, now: float) -> None:
        """Materialize every stream's lines due by ``now``."""
        for stream in self.streams:
            self._materialize(stream, now)

    def _materialize(self, stream: LogStream, now: float) -> None:
        limit = now if stream.end is None else min(now, stream.end)
        while stream.emitted < MAX_STREAM_LINES:
            at = stream.start + stream.emitted * stream.every
            if at > limit or (stream.end is not None and at >= stream.end):
                break
            item: dict[str, Any] = {
                "at": at,
                "service": stream.service,
                "status": stream.status,
                "message": stream.message,
                "attributes": dict(stream.attributes or {}),
                "tags": [f"service:{stream.service}"],
            }
            if stream.host:
                item["host"] = stream.host
            self.add(item)
            stream.emitted += 1

    def search(
        self,
        match: Match,
        hints: Hints,
        start: float,
        end: float,
        ascending: bool,
        limit: int,
        after: tuple[float, int] | None = None,
    ) -> tuple[list[LogLine], tuple[float, int] | None, bool]:
        """Up to ``limit`` matching lines with start <= at <= end in time order (ties by seq),
        after the cursor ``after``; the cursor of the next page; and whether the search ran out
        of its budget (``SEARCH_BUDGET`` term tests) before it was done.

        As Datadog does, every non-empty page has a cursor (its last line), a short one too: the
        page after it may be empty. An empty page, or one cut short by the budget, has none."""
        budget = _Budget(max(1, SEARCH_BUDGET // max(1, getattr(match, "cost", 1))))
        seeded = self._search_seeded(match, hints, start, end, ascending, limit, after, budget)
        added = self._search_added(match, start, end, ascending, limit, after, budget)
        page = sorted(seeded + added, key=lambda line: line.key, reverse=not ascending)[:limit]
        if budget.spent:
            return page, None, True
        return page, (page[-1].key if page else None), False

    def _search_seeded(
        self,
        match: Match,
        hints: Hints,
        start: float,
        end: float,
        ascending: bool,
        want: int,
        after: tuple[float, int] | None,
        budget: _Budget,
    ) -> list[LogLine]:
        index = self.seeded
        times = index.times
        lo, hi = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
        if after is not None:
            # Seeded keys (time, position) grow with the position; added lines sort after
            # every seeded line of the same time.
            at, seq = after
            if seq < ADDED_SEQ:
                lo, hi = (max(lo, seq + 1), hi) if ascending else (lo, min(hi, seq))
            else:
                edge = bisect.bisect_right(times, at)
                lo, hi = (max(lo, edge), hi) if ascending else (lo, min(hi, edge))
        found: list[LogLine] = []
        if lo >= hi:
            return found
        lines = index.lines
        for pos in index.candidates(hints, lo, hi, ascending):
            if budget.take():
                break
            line = lines[pos]
            if match(line):
                found.append(line)
                if len(found) >= want:
                    break
        return found

    def _search_added(
        self,
        match: Match,
        start: float,
        end: float,
        ascending: bool,
        want: int,
        after: tuple[float, int] | None,
        budget: _Budget,
    ) -> list[LogLine]:
        keys = self._added_keys
        lo, hi = bisect.bisect_left(keys, (start, -1)), bisect.bisect_right(keys, (end, 1 << 62))
        if after is not None:
            if ascending:
                lo = max(lo, bisect.bisect_right(keys, after))
            else:
                hi = min(hi, bisect.bisect_left(keys, after))
        found: list[LogLine] = []
        order = range(lo, hi) if ascending else range(hi - 1, lo - 1, -1)
        for i in order:
            if budget.take():
                break
            line = self.added[i]
            if match(line):
                found.append(line)
                if len(found) >= want:
                    break
        return found

    def by_ref(self, ref: str) -> LogLine | None:
        return self.seeded.by_ref.get(ref)


__all__ = [
    "LogLine",
    "LogStore",
    "LogStream",
    "SeededLogs",
    "decode_cursor",
    "encode_cursor",
    "normal_status",
    "wire",
]
