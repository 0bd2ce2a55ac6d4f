"""The broker interface, the local fan-out every broker shares, and the in-process broker.

The runner announces a batch of a run's events once they are stored: a PostgreSQL broker
inside the very transaction that stores them (NOTIFY is delivered on commit), any other
after the commit. So whatever a subscriber receives is already in the database, and a
subscriber that subscribed before reading the database can miss nothing: a message it
cannot use (events elided because they were too large, a gap after a reconnect) sends it
back to the database. `final` marks the batch that holds the run's last events; it also
carries the finished run's wire shape when it fits, so that an API process waiting for a
run that a worker executes answers without reading it back.

Each process keeps one connection to the broker, on one channel for every run; messages
are dispatched here to the subscribers of their run (WebSockets, and threads waiting for
a run that a worker executes).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

log = logging.getLogger("agentos.broker")

Event = dict[str, Any]


class BrokerError(Exception):
    """A broker URL that cannot be used; the message says what to change."""


@dataclass(frozen=True)
class Message:
    run_id: str
    last_seq: int
    final: bool
    events: list[Event] | None  # None: too large to carry, read them from the database
    # A final message's run as stored (its wire shape); None: read it from the database.
    run: dict[str, Any] | None = None

    def encode(self, limit: int | None = None) -> str:
        """The message as JSON text of at most `limit` bytes: without its events if they do
        not fit, and without the run too if that does not fit either."""
        head = {"r": self.run_id, "s": self.last_seq, "f": self.final}
        for events, run in ((self.events, self.run), (None, self.run), (None, None)):
            text = json.dumps({**head, "e": events, **({"run": run} if run is not None else {})},
                              separators=(",", ":"))
            if limit is None or len(text.encode()) <= limit:
                break
        return text

    @classmethod
    def decode(cls, text: str | bytes) -> Message | None:
        try:
            data = json.loads(text)
            run = data.get("run")
            return cls(str(data["r"]), int(data["s"]), bool(data["f"]), data.get("e"),
                       run if isinstance(run, dict) else None)
        except (ValueError, KeyError, TypeError):
            log.warning("ignored a broker message that is not a run announcement")
            return None


class Subscription:
    """A subscriber's queue of one run's messages; `finished` is set by its final message,
    which is kept as `final`."""

    def __init__(self, run_id: str, loop: asyncio.AbstractEventLoop | None) -> None:
        self.run_id = run_id
        self.loop = loop
        self.queue: asyncio.Queue[Message] | None = asyncio.Queue() if loop else None
        self.finished = threading.Event()
        self.final: Message | None = None

    def deliver(self, message: Message) -> None:
        if message.final:
            self.final = message
            self.finished.set()
        if self.queue is not None and self.loop is not None:
            try:
                self.loop.call_soon_threadsafe(self.queue.put_nowait, message)
            except RuntimeError:  # the subscriber's loop is closed: it is gone
                pass

    async def get(self) -> Message:
        assert self.queue is not None, "a thread's subscription has no queue; wait on .finished"
        return await self.queue.get()


class Broker:
    """Carries announcements of stored run events to every process. Subclasses override
    `publish_in` (transactional) or `publish_after`, and `listen`."""

    #: Whether messages reach other processes (False: followers poll the database).
    crosses_processes = False
    #: How long a follower waits for a message before it reads the database again.
    resync_seconds = 2.0

    def __init__(self) -> None:
        self._subscribers: dict[str, list[Subscription]] = {}
        self._lock = threading.Lock()
        if self.crosses_processes:
            self.resync_seconds = _seconds("AGENTOS_BROKER_RESYNC_SECONDS", self.resync_seconds)

    # Publishing, from the runner's threads.
    def publish_in(self, connection: Connection, message: Message) -> None:
        """Inside the transaction that stores the message's events."""

    def publish_after(self, message: Message) -> None:
        """After that transaction committed."""

    def publish_all_in(self, connection: Connection, messages: list[Message]) -> None:
        """`publish_in` for the messages of several runs stored in one transaction."""
        for message in messages:
            self.publish_in(connection, message)

    def publish_all_after(self, messages: list[Message]) -> None:
        """`publish_after` for the messages of several runs stored in one transaction."""
        for message in messages:
            self.publish_after(message)

    def send(self, message: Message) -> None:
        """Outside any transaction of the runner's (the sweep of a gone process's runs)."""
        self.publish_after(message)

    # Receiving.
    async def listen(self) -> None:
        """Receive messages until cancelled, dispatching each to this process's subscribers."""

    @contextmanager
    def subscribe(self, run_id: str, loop: asyncio.AbstractEventLoop | None = None) -> Iterator[Subscription]:
        """Subscribe to a run's messages (with `loop`: on a queue for async code, else just
        `.finished` for a thread). Subscribe before reading the database."""
        subscription = Subscription(run_id, loop)
        with self._lock:
            self._subscribers.setdefault(run_id, []).append(subscription)
        try:
            yield subscription
        finally:
            with self._lock:
                remaining = [s for s in self._subscribers.get(run_id, []) if s is not subscription]
                if remaining:
                    self._subscribers[run_id] = remaining
                else:
                    self._subscribers.pop(run_id, None)

    def dispatch(self, message: Message) -> None:
        with self._lock:
            subscribers = list(self._subscribers.get(message.run_id, ()))
        for subscription in subscribers:
            subscription.deliver(message)

    def close(self) -> None:
        """Release connections (the listener is cancelled by its owner)."""


def _seconds(variable: str, default: float) -> float:
    raw = os.environ.get(variable, "")
    try:
        value = float(raw) if raw.strip() else default
    except ValueError:
        raise BrokerError(f"{variable}={raw!r}: expected a number of seconds, e.g. 2") from None
    if not value > 0:
        raise BrokerError(f"{variable}={raw!r}: expected a positive number of seconds")
    return value


class LocalBroker(Broker):
    """In-process only: runs of this process are streamed by `RunStreams`; runs of any
    other process are followed by polling the database."""

    resync_seconds = 0.1

    def publish_after(self, message: Message) -> None:
        self.dispatch(message)
