"""How the server holds up under many slow or idle sockets.

Each open connection costs a file descriptor; with the usual soft limit of 1,024, a
client that opens a thousand sockets and never finishes a request (slowloris) leaves
the server unable to accept anyone else. Two defences:

- ``raise_open_files_limit()``: the soft ``RLIMIT_NOFILE`` goes up to the hard limit
  when the server starts, so it takes what the machine allows, not the shell's default.
- ``DeadlineProtocol``: uvicorn's HTTP protocol with a deadline for reading each
  request. uvicorn closes a connection idle after a response (``timeout_keep_alive``),
  but any byte cancels that timer, so a client dripping one byte every few seconds, or
  one that connects and sends nothing, holds its socket forever. Here a request's head
  and body must arrive within ``read_timeout`` of the connection opening or of the
  previous response, and its head (request line and headers) within ``max_head_bytes``;
  otherwise the connection is closed. Time the app spends answering (a long-polled
  event feed) does not count.
- Connections are capped below the file limit (``FILES_RESERVED`` stay free for trace
  files, scenes and agents' pipes). At the cap a new connection is let in and the one
  that has been waiting longest for its request is closed: a slow client loses its
  socket, a client that sends its request at once is served.
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass
from typing import Any, NoReturn

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

KEEP_ALIVE_S = 5.0
READ_TIMEOUT_S = 30.0
MAX_HEAD_BYTES = 64 * 1024
FILES_RESERVED = 32
"""Open files kept free of connections (at least; an eighth of the limit when that is more)."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    keep_alive: float = KEEP_ALIVE_S
    """Seconds an idle connection is kept open after a response."""
    read_timeout: float = READ_TIMEOUT_S
    """Seconds a client has to send one whole request (head and body)."""
    max_head_bytes: int = MAX_HEAD_BYTES
    """Largest request line plus headers; past it the client gets a 400 and the connection closes."""


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the soft limit on open files to the hard limit; returns (soft, hard) as they end up."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):  # e.g. above the kernel's nr_open: keep what we have
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def _soft_limit() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 1 << 20 if soft == resource.RLIM_INFINITY else soft


def accept_backlog() -> int:
    """The listen backlog, which is also how many connections asyncio accepts in one go
    (each holding a file until the loop next turns): an eighth of the file limit, 16 to 2,048."""
    return min(2048, max(16, _soft_limit() // 8))


def connection_cap() -> int:
    """How many connections the process may hold: its file limit less a reserve for files
    and less one accept burst, so that a burst at the cap never takes the reserve."""
    soft = _soft_limit()
    return max(8, soft - max(FILES_RESERVED, soft // 8) - accept_backlog())


class DeadlineProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that closes connections too slow to send their request.

    Both of its clocks, this read deadline and uvicorn's keep-alive timeout, run on one timer
    per connection (a watchdog): a request only notes the time, and the timer, when it fires,
    closes the connection if a deadline has passed and otherwise sleeps until the next one.
    uvicorn arms and cancels a timer per request for keep-alive alone."""

    read_timeout = READ_TIMEOUT_S
    max_head_bytes = MAX_HEAD_BYTES
    open_connections: dict[DeadlineProtocol, None] = {}  # noqa: RUF012  (every open one, of all listeners)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watchdog: asyncio.TimerHandle | None = None
        self._waiting_since: float | None = None
        """Loop time since which this connection waits for (the rest of) a request; None while answering."""
        self._idle_since: float | None = None
        """Loop time of the last response, while no byte has come since (uvicorn's keep-alive)."""
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._waiting_since = self.loop.time()  # its first request must come in time
        self._start_watchdog(self.read_timeout)
        self.open_connections[self] = None
        if len(self.open_connections) > connection_cap():
            self._shed_slowest()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_watchdog()
        self.open_connections.pop(self, None)
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._head_bytes = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._head_bytes += len(url)
        if self._head_bytes > self.max_head_bytes:
            self._head_too_large()
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        # uvicorn's, inline (the parser calls this for every header of every request).
        self._head_bytes += len(name) + len(value)
        if self._head_bytes > self.max_head_bytes:
            self._head_too_large()
        name = name.lower()
        if name == b"expect" and value.lower() == b"100-continue":
            self.expect_100_continue = True
        self.headers.append((name, value))

    def handle_websocket_upgrade(self) -> None:
        # The connection becomes a WebSocket (a tool's event socket): it lives as long as the
        # app keeps it, so no read deadline, and it is no longer an HTTP connection to shed.
        self._stop_watchdog()
        self.open_connections.pop(self, None)
        super().handle_websocket_upgrade()

    def on_message_complete(self) -> None:
        self._waiting_since = None  # the whole request is in: answering it takes what it takes
        super().on_message_complete()

    def on_response_complete(self) -> None:
        # uvicorn's, with the keep-alive timeout noted for the watchdog rather than armed.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        now = self.loop.time()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._idle_since = now
        self._waiting_since = now  # the next request, if any, must come in time too
        self._start_watchdog(min(self.read_timeout, self.timeout_keep_alive))

    def _unset_keepalive_if_required(self) -> None:
        self._idle_since = None  # a byte came (or the connection went): no longer idle

    # --- deadlines --------------------------------------------------------------------

    def _head_too_large(self) -> NoReturn:
        # Raised inside the parser's callback: uvicorn answers 400 and closes the connection.
        raise ValueError(f"request line and headers over {self.max_head_bytes} bytes")

    def _start_watchdog(self, delay: float) -> None:
        """Have the watchdog look in ``delay`` seconds, unless it is already due to look."""
        if self._watchdog is None:
            self._watchdog = self.loop.call_later(delay, self._watch)

    def _stop_watchdog(self) -> None:
        self._waiting_since = self._idle_since = None
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _watch(self) -> None:
        """The watchdog: close the connection past a deadline, else sleep until the next one."""
        self._watchdog = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        due: list[float] = []
        if self._idle_since is not None:
            if now >= self._idle_since + self.timeout_keep_alive:
                self.transport.close()  # idle too long after a response (uvicorn's keep-alive)
                return
            due.append(self._idle_since + self.timeout_keep_alive)
        if self._waiting_since is not None:
            cycle = self.cycle
            reading = cycle is None or cycle.response_complete or cycle.more_body
            if reading:  # (answering a pipelined request has no deadline; its response re-arms this)
                if now >= self._waiting_since + self.read_timeout:
                    self.transport.close()  # too slow to send its request
                    return
                due.append(self._waiting_since + self.read_timeout)
        if due:
            self._watchdog = self.loop.call_later(max(0.0, min(due) - now), self._watch)

    def _shed_slowest(self) -> None:
        """At the cap: close the connection that has waited longest for its request."""
        waiting = [c for c in self.open_connections if c is not self and c._waiting_since is not None]
        if waiting:
            slowest = min(waiting, key=lambda c: c._waiting_since or 0.0)
            slowest.transport.close()
            self.open_connections.pop(slowest, None)
