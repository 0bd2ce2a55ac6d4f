"""The database: URL resolution, engine set-up, migrations, sessions.

SQLite (the default: agentos.db in the per-user data directory, ``data_dir()``) runs in WAL mode; every write transaction in a process
takes one lock, because SQLite has one writer anyway and a deferred transaction that
upgrades from read to write can fail instead of waiting. PostgreSQL needs no such lock.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from platformdirs import user_data_dir
from sqlalchemy import Connection, Engine, create_engine, event, exc, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from agentos import storable

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# Seconds a pooled PostgreSQL connection may sit idle before it is pinged on checkout.
PING_AFTER_IDLE = 5.0
# Any constant shared by every process; serialises concurrent migrations on PostgreSQL.
_PG_MIGRATION_LOCK = 7_424_918_310


def data_dir() -> Path:
    """Where AgentOS keeps its default database: ``$AGENTOS_HOME``, else the platform's
    per-user data directory (``~/.local/share/agentos`` on Linux), so that ``agentos keys
    create`` and ``agentos serve`` share one database from whichever directory they run."""
    home = os.environ.get("AGENTOS_HOME")
    return Path(home).expanduser() if home else Path(user_data_dir("agentos", appauthor=False))


def default_url() -> str:
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'agentos.db'}"


def describe(url: str) -> str:
    """A database URL as a person reads it: the file of a SQLite one, no password."""
    if url.startswith("sqlite:///"):
        return url.removeprefix("sqlite:///")
    return make_url(url).render_as_string(hide_password=True)


def resolve_url(database_url: str | None = None) -> str:
    """The URL given, else AGENTOS_DATABASE_URL, else agentos.db in ``data_dir()``; psycopg 3
    for PostgreSQL."""
    url = database_url or os.environ.get("AGENTOS_DATABASE_URL") or default_url()
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            url = "postgresql+psycopg://" + url[len(plain) :]
    return url


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            json_serializer=storable.dumps,
            connect_args={"check_same_thread": False, "timeout": 30},
            pool_size=8,
            max_overflow=32,
        )

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        return engine
    engine = create_engine(url, json_serializer=storable.dumps, pool_size=10, max_overflow=30)

    # Ping a pooled connection before use only when it sat idle for a while: a ping on every
    # checkout (pool_pre_ping) costs a round trip per query, a sixth of a run's time on the
    # hot path; a connection the server closed (a restart) has been idle, so is still caught.
    @event.listens_for(engine, "checkin")
    def _idle_since(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if time.monotonic() - record.info.get("idle_since", time.monotonic()) < PING_AFTER_IDLE:
            return
        try:
            dbapi_connection.execute("SELECT 1")
            dbapi_connection.rollback()  # the ping opened a transaction: leave the connection idle
        except Exception:
            raise exc.DisconnectionError() from None  # the pool replaces it and checks out again

    return engine


def migrate(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to the newest migration shipped in the package (or to `revision`)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False))
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(text(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})"))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)


class Database:
    """An engine plus sessions: `read()` for queries, `write()` for a committed transaction."""

    def __init__(self, url: str | None = None, *, run_migrations: bool = True) -> None:
        self.url = resolve_url(url)
        self.engine = make_engine(self.url)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # Reads on PostgreSQL run in autocommit: no BEGIN and ROLLBACK round trips around a
        # query. Each statement still sees what was committed before it (as in READ COMMITTED).
        self._read_engine = self.engine if self.is_sqlite else self.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._read_sessions = (
            self._sessions if self.is_sqlite else sessionmaker(self._read_engine, expire_on_commit=False)
        )
        self._write_lock = threading.Lock() if self.is_sqlite else None
        if run_migrations:
            migrate(self.engine)

    @contextmanager
    def read(self) -> Iterator[Session]:
        with self._read_sessions() as session:
            yield session

    @contextmanager
    def read_connection(self) -> Iterator[Connection]:
        """A Core connection for queries, without an ORM session: the cheap path for hot reads."""
        with self._read_engine.connect() as connection:
            yield connection

    @contextmanager
    def write(self) -> Iterator[Session]:
        with self._write_lock or nullcontext(), self._sessions() as session, session.begin():
            yield session

    @contextmanager
    def write_connection(self) -> Iterator[Connection]:
        """A Core connection in a committed transaction: the cheap path for hot writes."""
        with self._write_lock or nullcontext(), self.engine.begin() as connection:
            yield connection

    def dispose(self) -> None:
        self.engine.dispose()
