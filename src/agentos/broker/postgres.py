"""The PostgreSQL broker: NOTIFY on one channel, LISTEN on one connection per process.

When the broker is the service's own database (the usual case), the announcement is
sent inside the transaction that stores the events: PostgreSQL delivers a NOTIFY only
on commit and never for a transaction that rolls back, so a message can neither run
ahead of its events nor announce events that were never stored. Another PostgreSQL
server is notified right after the commit instead.

A payload is limited to 8000 bytes: a larger batch goes out without its events, and
its subscribers read them from the database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading

import psycopg
from sqlalchemy import Connection, make_url, text

from agentos.broker.base import Broker, Message

log = logging.getLogger("agentos.broker")

CHANNEL = "agentos_runs"
PAYLOAD_LIMIT = 7900
RECONNECT_SECONDS = 1.0
# The payloads go as one JSON array (a text[] parameter is dumped element by element in Python).
_NOTIFY_ALL = text("SELECT pg_notify(:channel, payload) FROM json_array_elements_text(CAST(:payloads AS json)) AS payload")


def conninfo(url: str) -> str:
    """A libpq URL from a SQLAlchemy or libpq one."""
    scheme, rest = url.split("://", 1)
    return "postgresql://" + rest


class PostgresBroker(Broker):
    crosses_processes = True

    def __init__(self, url: str, database_url: str) -> None:
        super().__init__()
        self.conninfo = conninfo(url)
        self.same_database = _same_database(url, database_url)
        self._publisher: psycopg.Connection | None = None
        self._publisher_lock = threading.Lock()

    def publish_in(self, connection: Connection, message: Message) -> None:
        if self.same_database:
            connection.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": CHANNEL, "payload": message.encode(PAYLOAD_LIMIT)},
            )

    def publish_all_in(self, connection: Connection, messages: list[Message]) -> None:
        """One statement for the messages of several runs (a worker stores its runs' ends together)."""
        if self.same_database and messages:
            payloads = json.dumps([m.encode(PAYLOAD_LIMIT) for m in messages])
            connection.execute(_NOTIFY_ALL, {"channel": CHANNEL, "payloads": payloads})

    def publish_after(self, message: Message) -> None:
        if not self.same_database:
            self.send(message)

    def send(self, message: Message) -> None:
        payload = message.encode(PAYLOAD_LIMIT)
        with self._publisher_lock:
            for attempt in (1, 2):
                try:
                    if self._publisher is None or self._publisher.closed:
                        self._publisher = psycopg.connect(self.conninfo, autocommit=True, connect_timeout=5)
                    self._publisher.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))
                    return
                except psycopg.Error:
                    self._publisher = None
                    if attempt == 2:  # subscribers fall back to the database within resync_seconds
                        log.warning("could not notify run %s through the broker", message.run_id)

    async def listen(self) -> None:
        while True:
            try:
                connection = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True)
                async with connection:
                    await connection.execute(f"LISTEN {CHANNEL}")
                    async for notify in connection.notifies():
                        message = Message.decode(notify.payload)
                        if message is not None:
                            self.dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # followers read the database meanwhile
                log.warning("broker connection lost (%s); reconnecting", type(exc).__name__)
                await asyncio.sleep(RECONNECT_SECONDS)

    def close(self) -> None:
        with self._publisher_lock:
            if self._publisher is not None:
                self._publisher.close()
                self._publisher = None


def _same_database(broker_url: str, database_url: str) -> bool:
    if not database_url.startswith("postgresql"):
        return False
    try:
        a, b = make_url(conninfo(broker_url)), make_url(conninfo(database_url))
    except Exception:
        return False
    return (a.host or "localhost", a.port or 5432, a.database, a.username) == (
        b.host or "localhost", b.port or 5432, b.database, b.username
    )
