"""A trial as the console reads it from its folder: checks, calls, records and log.

The trace can hold tens of thousands of calls; the console keeps, per trial, the calls'
headers (no bodies) and where each line starts, so a page lists or bins them without
parsing bodies again, and opens one call's bodies by seeking to its line. Parsed trials
are cached until a file of theirs changes.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ancha.results import coverage_gaps
from ancha.results.run_folder import TrialFolder

CACHE_SIZE = 16


@dataclass(frozen=True, slots=True)
class Call:
    """A trace entry's header."""

    seq: int
    at: float
    actor: str
    tool: str
    method: str
    path: str
    status: int
    worked: bool

    @property
    def label(self) -> str:
        return f"{self.method} {self.path} → {self.status}"


@dataclass
class TrialData:
    folder: TrialFolder
    checks: dict[str, Any]
    calls: list[Call]
    offsets: dict[int, tuple[int, int]]
    """seq -> (offset, length) of its line in trace.jsonl."""
    records: list[dict[str, Any]]
    """Each record with ``_at``, its time as epoch seconds."""
    derived: dict[str, Any] = field(default_factory=dict)
    """What pages compute from the trial once (its timeline), kept as long as it is cached."""

    @property
    def coverage_gaps(self) -> str:
        """``3 calls hit unimplemented operations: …`` when the agent called operations the
        replica does not implement; '' otherwise."""
        return coverage_gaps.describe(coverage_gaps.of_checks(self.checks))

    @property
    def graded(self) -> bool:
        return self.folder.is_graded()

    def call(self, seq: int) -> Call | None:
        index = seq - 1  # seqs count from 1, in order
        if 0 <= index < len(self.calls) and self.calls[index].seq == seq:
            return self.calls[index]
        return next((c for c in self.calls if c.seq == seq), None)

    def entry(self, seq: int) -> dict[str, Any] | None:
        """The whole trace entry (with its bodies), read from its line."""
        where = self.offsets.get(seq)
        if where is None:
            return None
        try:
            with self.folder.trace_path.open("rb") as trace:
                trace.seek(where[0])
                line = trace.read(where[1])
            entry = json.loads(line)
        except (OSError, ValueError):
            return None
        return entry if isinstance(entry, dict) else None


def epoch(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class TrialCache:
    """Parsed trials by folder, dropped when a file of theirs changes."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._items: OrderedDict[Path, tuple[tuple[float, ...], TrialData]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def load(self, folder: TrialFolder) -> TrialData:
        stamp = tuple(_mtime(path) for path in (folder.checks_path, folder.trace_path, folder.records_path,
                                                folder.world_path))
        with self._lock:
            hit = self._items.get(folder.path)
            if hit is not None and hit[0] == stamp:
                self._items.move_to_end(folder.path)
                return hit[1]
        data = read_trial(folder)
        with self._lock:
            self._items[folder.path] = (stamp, data)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return data


def read_trial(folder: TrialFolder) -> TrialData:
    checks = folder.read_checks() if folder.is_graded() else {"verdict": None, "results": []}
    calls, offsets = _read_calls(folder.trace_path)
    return TrialData(folder, checks, calls, offsets, _read_records(folder.records_path))


_BODIES = b', "request": '
_TAIL = re.compile(rb'"worked": (true|false), "coverage_gap": (?:true|false)}\s*$')


def _read_calls(path: Path) -> tuple[list[Call], dict[int, tuple[int, int]]]:
    """Every line's header. A ``trace.jsonl`` line is the entry's fields in a fixed order,
    bodies after ``status`` and ``worked`` near the end; only the head and the tail are
    parsed, so a trace of large bodies reads at the speed of its line breaks. A line in
    any other shape is parsed whole."""
    calls: list[Call] = []
    offsets: dict[int, tuple[int, int]] = {}
    try:
        raw = path.read_bytes()
    except OSError:
        return calls, offsets
    start = 0
    while start < len(raw):
        end = raw.find(b"\n", start)
        end = len(raw) if end < 0 else end
        call = _header(raw, start, end)
        if call is not None:
            calls.append(call)
            offsets[call.seq] = (start, end - start)
        start = end + 1
    return calls, offsets


def _header(raw: bytes, start: int, end: int) -> Call | None:
    cut = raw.find(_BODIES, start, end)
    tail = _TAIL.search(raw, max(start, end - 64), end) if cut >= 0 else None
    try:
        if cut >= 0 and tail is not None:
            entry = json.loads(raw[start:cut] + b"}")
            worked = tail.group(1) == b"true"
        else:
            entry = json.loads(raw[start:end])
            worked = bool(entry.get("worked", True))
        at = epoch(entry.get("at"))
        seq = entry.get("seq")
        if not isinstance(seq, int) or at is None:
            return None
        return Call(seq, at, str(entry.get("actor", "")), str(entry.get("tool", "")), str(entry.get("method", "")),
                    str(entry.get("path", "")), int(entry.get("status") or 0), worked)
    except (ValueError, TypeError, AttributeError):
        return None  # a line that cannot be read is left out, as ``ancha explain`` does


def _read_records(path: Path) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        at = epoch(record.get("at")) if isinstance(record, dict) else None
        if at is not None:
            records.append({**record, "_at": at})
    return records


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return -1.0
