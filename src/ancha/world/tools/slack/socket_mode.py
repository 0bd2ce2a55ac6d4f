"""Socket Mode: Slack's events over a WebSocket the app opens, as Slack runs it.

``apps.connections.open`` with the app-level token (``xapp-...``) answers a one-use URL
below the replica (``ws://HOST/envs/ENV/slack/link/?ticket=...&app_id=...``; Slack's own
is ``wss://wss-primary.slack.com/link/...``, which the replica hands out when reached
through real hostnames; the clients take both). On connecting,
the app gets ``hello``; then each event comes as an ``events_api`` envelope whose
``payload`` is the ``event_callback`` body, and the app acknowledges it by sending back
``{"envelope_id": ...}``. An envelope not acknowledged within ``ack_timeout`` (real
seconds) is sent again with ``retry_attempt`` one higher and ``retry_reason`` ``timeout``,
up to ``MAX_RETRIES`` times, as Slack retries. ``refresh()`` (and every connection
after ``max_age`` real seconds, as Slack does every few hours) sends ``disconnect`` with
``reason: refresh_requested``: the app opens a new connection, and delivery goes on
there; the old one is closed once the new one is up (or after ``drain_s``).

The clock: the agent is busy while an envelope is undelivered or unacknowledged. It
waits (and the clock may jump) when it holds a connection, nothing is in flight, it has
no request open, and it has been quiet for ``QUIET_S`` real seconds: Bolt acknowledges
an event before its listener runs, and without that pause the clock would jump between
the ack and the listener's first call.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.websockets import WebSocket, WebSocketDisconnect

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

    from ancha.world.kernel.port import WorldPort
    from ancha.world.tools.slack.replica import SlackReplica

ACK_TIMEOUT_S = 3.0
"""Real seconds an app has to acknowledge an envelope before it is sent again (Slack's
Events API allows 3 seconds)."""
MAX_RETRIES = 3
"""Slack retries an unacknowledged event three times, then drops it."""
QUIET_S = 0.5
"""Real seconds after the agent's last ack or request before it counts as waiting."""
MAX_AGE_S = 2 * 3600.0
"""Real seconds a connection lives before Slack asks the app to refresh it."""
DRAIN_S = 10.0
"""Real seconds a refreshed connection stays open for the app to replace it."""
LINK_PATH = "/link/"


@dataclass(eq=False)
class Envelope:
    """One event on its way to the app."""

    envelope_id: str
    payload: dict[str, Any]
    attempt: int = 0
    """0 on first delivery; the retry number after."""
    due: float = 0.0
    """Loop time when it is to be sent (again)."""
    sent: bool = False

    def message(self) -> str:
        envelope: dict[str, Any] = {"envelope_id": self.envelope_id, "payload": self.payload, "type": "events_api",
                                    "accepts_response_payload": False,
                                    "retry_attempt": self.attempt, "retry_reason": "timeout" if self.attempt else ""}
        return json.dumps(envelope, ensure_ascii=False, separators=(",", ":"))


@dataclass(eq=False)
class Connection:
    socket: WebSocket
    number: int
    opened: float
    draining: bool = False
    """Sent ``disconnect``: nothing more is delivered on it."""
    closed: asyncio.Event = field(default_factory=asyncio.Event)


class SocketMode:
    """One replica's Socket Mode endpoint: tickets, connections, envelopes in flight."""

    def __init__(self, world: WorldPort, replica: SlackReplica) -> None:
        self.world = world
        self.replica = replica
        self.ack_timeout = ACK_TIMEOUT_S
        self.max_age = MAX_AGE_S
        self.drain_s = DRAIN_S
        self.quiet_s = QUIET_S
        self.tickets: set[str] = set()
        self.connections: list[Connection] = []
        self.envelopes: dict[str, Envelope] = {}
        """Not yet acknowledged, in the order they were pushed."""
        self.acked: list[str] = []
        """Envelope ids acknowledged, in order (for tests and reports)."""
        self.dropped: list[str] = []
        """Envelope ids given up on after ``MAX_RETRIES`` retries."""
        self._numbers = itertools.count(1)
        self._wake: asyncio.Event | None = None
        self._pump: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._active_at = 0.0
        """Monotonic time of the agent's last ack over the socket."""
        self._recheck: asyncio.TimerHandle | None = None

    # --- the Web API side ----------------------------------------------------------------

    def open_url(self) -> str:
        """A new one-use URL for ``apps.connections.open``."""
        ticket = self._uuid()
        self.tickets.add(ticket)
        return f"{self.replica.urls.socket_mode}{LINK_PATH}?ticket={ticket}&app_id={self.replica.bot.app_id}"

    # --- delivery --------------------------------------------------------------------------

    def push(self, payload: dict[str, Any]) -> Envelope:
        """Send an ``event_callback`` body to the app (now if it is connected, else once it is)."""
        envelope = Envelope(self._uuid(), payload, due=self._now())
        self.envelopes[envelope.envelope_id] = envelope
        self._poke()
        self.world.agent_changed()
        return envelope

    def refresh(self) -> int:
        """Ask every open connection to refresh (``disconnect``, ``refresh_requested``); how many were asked."""
        asked = 0
        for connection in list(self.connections):
            if not connection.draining and self._loop is not None:
                self._loop.create_task(self._disconnect(connection))
                asked += 1
        return asked

    @property
    def live(self) -> list[Connection]:
        return [c for c in self.connections if not c.draining]

    def waiting(self) -> bool:
        """The agent listens on a connection with nothing in flight and has been quiet a moment."""
        if not self.live or self.envelopes:
            return False
        quiet_for = time.monotonic() - max(self._active_at, self.world.agent_active_at)
        if quiet_for >= self.quiet_s:
            return True
        self._recheck_after(self.quiet_s - quiet_for)
        return False

    def _recheck_after(self, delay: float) -> None:
        loop = self._loop
        if loop is None or (self._recheck is not None and not self._recheck.cancelled()):
            return

        def recheck() -> None:
            self._recheck = None
            self.world.agent_changed()

        self._recheck = loop.call_later(max(delay, 0.0) + 0.001, recheck)

    # --- the WebSocket side ----------------------------------------------------------------

    async def serve(self, path: str, scope: Scope, receive: Receive, send: Send) -> None:
        """One WebSocket connection to ``<tool URL>/link/?ticket=...``."""
        socket = WebSocket(scope, receive, send)
        ticket = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("ticket") or [""])[0]
        if path.rstrip("/") != LINK_PATH.rstrip("/") or ticket not in self.tickets or self.world.status != "running":
            await socket.close(code=1008)  # before accepting: the handshake is refused
            return
        self.tickets.discard(ticket)
        self._started()
        await socket.accept()
        connection = Connection(socket, next(self._numbers), self._now())
        await socket.send_text(json.dumps(self._hello(connection)))
        self.connections.append(connection)
        for other in self.connections:
            if other is not connection and other.draining:
                other.closed.set()  # its replacement is up
        self._active_at = time.monotonic()
        self._poke()
        self.world.agent_changed()
        reader = asyncio.ensure_future(self._read(connection))
        try:
            closed = asyncio.ensure_future(connection.closed.wait())
            await asyncio.wait({reader, closed}, timeout=self.max_age, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done() and not closed.done():
                await self._disconnect(connection)
                await asyncio.wait({reader, closed}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
        finally:
            reader.cancel()
            if connection in self.connections:
                self.connections.remove(connection)
            try:
                await socket.close()
            except Exception:  # already closed by the app
                pass
            self._poke()  # the delivery task ends once the trial has and no connection is left
            self.world.agent_changed()

    def _hello(self, connection: Connection) -> dict[str, Any]:
        return {"type": "hello", "num_connections": len(self.live) + 1,
                "debug_info": {"host": f"applink-ancha-{self.world.id}", "build_number": 1,
                               "approximate_connection_time": int(self.max_age)},
                "connection_info": {"app_id": self.replica.bot.app_id}}

    async def _read(self, connection: Connection) -> None:
        """Acknowledgements from the app, until it goes."""
        try:
            while True:
                text = await connection.socket.receive_text()
                try:
                    message = json.loads(text)
                except ValueError:
                    continue
                envelope_id = message.get("envelope_id") if isinstance(message, dict) else None
                if isinstance(envelope_id, str) and self.envelopes.pop(envelope_id, None) is not None:
                    self.acked.append(envelope_id)
                    self._active_at = time.monotonic()
                    self.world.agent_changed()
        except (WebSocketDisconnect, RuntimeError):
            return

    async def _disconnect(self, connection: Connection) -> None:
        if connection.draining:
            return
        connection.draining = True
        try:
            await connection.socket.send_text(json.dumps(
                {"type": "disconnect", "reason": "refresh_requested",
                 "debug_info": {"host": f"applink-ancha-{self.world.id}"}}))
        except Exception:
            connection.closed.set()
            return
        self.world.agent_changed()
        assert self._loop is not None
        self._loop.call_later(self.drain_s, connection.closed.set)

    def _started(self) -> None:
        if self._pump is None or self._pump.done():
            self._loop = asyncio.get_running_loop()
            self._wake = asyncio.Event()
            self._pump = self._loop.create_task(self._send_due(), name=f"slack-socket-{self.world.id}")

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _uuid(self) -> str:
        """A ticket or envelope id: from the world's secrets (a ticket opens a connection), so
        that a replay hands out the same ones."""
        return str(uuid.UUID(bytes=self.world.secrets.token_bytes(16), version=4))

    def _now(self) -> float:
        return self._loop.time() if self._loop is not None else 0.0

    async def _send_due(self) -> None:
        """Send every envelope that is due on the newest live connection; sleep until the next."""
        assert self._wake is not None
        while self.world.status == "running" or self.connections:
            self._wake.clear()
            now = self._now()
            live = self.live
            for envelope in list(self.envelopes.values()):
                if envelope.due > now or not live:
                    continue
                if envelope.sent:  # sent and not acknowledged in time
                    if envelope.attempt >= MAX_RETRIES:
                        del self.envelopes[envelope.envelope_id]
                        self.dropped.append(envelope.envelope_id)
                        self.world.agent_changed()
                        continue
                    envelope.attempt += 1
                try:
                    await live[-1].socket.send_text(envelope.message())
                except Exception:  # the connection went: the envelope waits for the next one
                    envelope.due = now
                    break
                envelope.sent = True
                envelope.due = now + self.ack_timeout
            upcoming = [e.due for e in self.envelopes.values()] if self.live else []
            timeout = max(0.0, min(upcoming) - self._now()) if upcoming else None
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                pass


def new_socket_mode(world: WorldPort, replica: SlackReplica) -> SocketMode:
    """The replica's Socket Mode endpoint; with ``slack_transport: socket`` it also tells the
    clock when the agent waits."""
    socket_mode = SocketMode(world, replica)
    if world.agent.get("slack_transport") == "socket":
        world.add_waiter(socket_mode.waiting)
    return socket_mode
