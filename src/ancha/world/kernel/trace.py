"""The trace: every request to a tool in an environment, numbered from 1.

Only an index lives in memory (who called what, when, how it came out); the request
and response bodies are spooled to a file as each call happens and read back, as the
bytes that were read and written, only when a check or a report asks. A long trial
that reads big pages thousands of times therefore costs the server a few hundred
bytes per call, not the bodies themselves.

The spool is an unnamed temporary file (``TMPDIR``, or ``spool_dir``): the operating
system removes it when the trace is closed, the environment torn down, or the server
dies. ``lines(after, limit)`` pages the trace as ``trace.jsonl`` lines; a body that
cannot be decoded (too deep, not JSON) is given as its text, so no body can make a
page fail.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

from ancha.world.kernel import bounded_json


class TraceClosed(RuntimeError):
    """The trace's bodies were asked for after its environment was torn down."""


class _Spool:
    """An append-only file of bodies, read back by offset (safe from any thread).

    Appends are gathered in memory and written out together once ``FLUSH_BYTES`` are
    waiting (one system call for many small calls' bodies), and before any read that
    reaches into them: a reader always sees every byte appended before it asked."""

    FLUSH_BYTES = 64 * 1024

    def __init__(self, spool_dir: str | None = None) -> None:
        self._file = tempfile.TemporaryFile(prefix="ancha-trace-", dir=spool_dir)  # noqa: SIM115 (closed by close())
        self._fd = self._file.fileno()
        self._end = 0
        """Bytes appended (written out or waiting)."""
        self._written = 0
        """Bytes written to the file; the rest of ``_end`` waits in ``_waiting``."""
        self._waiting: list[bytes] = []
        self._lock = threading.Lock()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def write(self, *parts: bytes) -> int:
        """Append ``parts`` back to back; the offset of the first."""
        with self._lock:
            if self._file.closed:
                raise TraceClosed("the trace is closed: its environment was torn down")
            start = self._end
            for part in parts:
                if part:
                    self._waiting.append(part)
                    self._end += len(part)
            if self._end - self._written >= self.FLUSH_BYTES:
                self._flush()
            return start

    def _flush(self) -> None:
        """Write out what waits (the lock held)."""
        if not self._waiting or self._file.closed:
            return
        data = b"".join(self._waiting)
        self._waiting = []
        view = memoryview(data)
        while view:
            written = os.pwrite(self._fd, view, self._written)
            self._written += written
            view = view[written:]

    def read(self, offset: int, length: int) -> bytes:
        if length == 0:
            return b""
        if self._file.closed:
            raise TraceClosed("the trace is closed: its environment was torn down; "
                              "read trace.jsonl in the trial's folder instead")
        if offset + length > self._written:
            with self._lock:
                self._flush()
        chunks: list[bytes] = []
        while length:
            chunk = os.pread(self._fd, length, offset)
            if not chunk:
                break
            chunks.append(chunk)
            offset += len(chunk)
            length -= len(chunk)
        return b"".join(chunks)

    @property
    def size(self) -> int:
        return self._end

    def __reduce__(self) -> tuple[Any, ...]:
        """A checkpoint keeps the bodies themselves; a restored spool is a new file holding them."""
        with self._lock:
            self._flush()
        return _spool_of, (self.read(0, self._written) if self._written else b"",)

    def close(self) -> None:
        with self._lock:
            self._waiting = []
            self._file.close()


def _spool_of(data: bytes) -> _Spool:
    spool = _Spool()
    if data:
        spool.write(data)
    return spool


@dataclass(slots=True)
class TraceEntry:
    """One call. Its bodies live in the trace's spool: ``request`` and ``response`` read
    them back (bytes as read and written)."""

    seq: int
    at: float
    actor: str
    tool: str
    method: str
    path: str
    query: str
    status: int
    worked: bool
    coverage_gap: bool
    request_type: str
    _spool: _Spool
    _offset: int
    _request_len: int
    _response_len: int
    host: str = ""
    """The vendor hostname the agent called (``agent.hostnames: real``); empty for a base-URL call."""
    arrived: float = 0.0
    """The simulated instant an agent's call arrived at (0: a call from inside the world, a
    person's or a world rule's, which a replay makes again by itself)."""
    _head_len: int = 0
    """The agent's call's request headers, as JSON, follow the response in the spool."""

    @property
    def request(self) -> bytes:
        return self._spool.read(self._offset, self._request_len)

    @property
    def response(self) -> bytes:
        return self._spool.read(self._offset + self._request_len, self._response_len)

    @property
    def head(self) -> bytes:
        """The request's headers as JSON (an agent's call only; ``b""`` otherwise)."""
        return self._spool.read(self._offset + self._request_len + self._response_len, self._head_len)

    @property
    def response_size(self) -> int:
        return self._response_len

    def request_json(self) -> Any:
        return _decode_body(self.request, self.request_type)

    def response_json(self) -> Any:
        return _decode_body(self.response, "application/json")

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": datetime.fromtimestamp(self.at, UTC).isoformat().replace("+00:00", "Z"),
            "actor": self.actor,
            "tool": self.tool,
            "method": self.method,
            "path": self.path,
            "query": dict(parse_qsl(self.query, keep_blank_values=True)),
            "status": self.status,
            "request": self.request_json(),
            "response": self.response_json(),
            "worked": self.worked,
            "coverage_gap": self.coverage_gap,
            **({"host": self.host} if self.host else {}),
            **({"arrived": _iso(self.arrived)} if self.arrived else {}),
        }

    def to_line(self) -> str:
        """The entry as one ``trace.jsonl`` line (with its newline). A body too deep to
        encode again is given as its text."""
        record = self.to_dict()
        try:
            return json.dumps(record) + "\n"
        except (RecursionError, ValueError):
            record["request"] = _text(self.request)
            record["response"] = _text(self.response)
            return json.dumps(record) + "\n"


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _text(body: bytes) -> str | None:
    return body.decode("utf-8", errors="replace") if body else None


def _decode_body(body: bytes, content_type: str) -> Any:
    if not body:
        return None
    text = body.decode("utf-8", errors="replace")
    if "x-www-form-urlencoded" in content_type:
        return dict(parse_qsl(text, keep_blank_values=True))
    try:
        return bounded_json.loads(text)
    except ValueError:  # not JSON, nested too deep, or holding a lone surrogate (which no encoder takes back)
        return text


class Trace:
    """The calls of one environment, in order. ``entries`` is the in-memory index."""

    def __init__(self, spool_dir: str | None = None) -> None:
        self.entries: list[TraceEntry] = []
        self._spool = _Spool(spool_dir)

    def append(self, *, request: bytes = b"", response: bytes = b"", request_type: str = "",
               **fields: Any) -> TraceEntry:
        """Record one call; its bodies go to the spool at once (or nowhere, once the
        environment is torn down: a request still in flight then is only indexed)."""
        if self._spool.closed:
            request = response = b""
        offset = 0 if self._spool.closed else self._spool.write(request, response)
        entry = TraceEntry(seq=len(self.entries) + 1, request_type=request_type, _spool=self._spool,
                           _offset=offset, _request_len=len(request), _response_len=len(response), **fields)
        self.entries.append(entry)
        return entry

    def add_call(self, at: float, actor: str, tool: str, method: str, path: str, query: str, status: int,
                 request: bytes, response: bytes, worked: bool, coverage_gap: bool,
                 request_type: str, host: str = "", arrived: float = 0.0, head: bytes = b"") -> TraceEntry:
        """``append``, its fields given in order (the dispatch path: no keyword packing)."""
        spool = self._spool
        if spool.closed:
            request = response = head = b""
            offset = 0
        else:
            offset = spool.write(request, response, head)
        entry = TraceEntry(len(self.entries) + 1, at, actor, tool, method, path, query, status, worked,
                           coverage_gap, request_type, spool, offset, len(request), len(response), host,
                           arrived, len(head))
        self.entries.append(entry)
        return entry

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def spooled_bytes(self) -> int:
        """How many body bytes the spool holds (on disk, not in memory)."""
        return self._spool.size

    def by_actor(self, actor: str) -> Iterator[TraceEntry]:
        return (e for e in self.entries if e.actor == actor)

    def page(self, after: int = 0, limit: int | None = None) -> list[TraceEntry]:
        """Entries with seq > ``after``, at most ``limit`` of them (all when None)."""
        start = max(after, 0)
        end = len(self.entries) if limit is None else min(start + max(limit, 0), len(self.entries))
        return self.entries[start:end]

    def lines(self, after: int = 0, limit: int | None = None) -> Iterator[str]:
        """``trace.jsonl`` lines of ``page(after, limit)``, each read back from the spool as it is given."""
        for entry in self.page(after, limit):
            yield entry.to_line()

    def to_jsonl(self) -> str:
        return "".join(self.lines())

    def close(self) -> None:
        """Drop the spool (the environment is torn down); the index stays readable."""
        self._spool.close()
