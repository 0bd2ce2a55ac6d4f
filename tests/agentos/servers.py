"""What AgentOS's test folders share: an ASGI app on a loopback port, and fresh PostgreSQL
databases (each test session's own, dropped afterwards; a missing PostgreSQL skips, or fails
when CI=true)."""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import uvicorn

PG_CANDIDATES = [
    "postgresql://postgres@127.0.0.1:5432/test",
    "postgresql://root@127.0.0.1:5432/test",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerThread:
    """An ASGI app served by uvicorn on a loopback port in a background thread."""

    def __init__(self, app: Any) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def pg_admin_url() -> str | None:
    candidates = [os.environ["AGENTOS_TEST_PG_URL"]] if os.environ.get("AGENTOS_TEST_PG_URL") else PG_CANDIDATES
    for url in candidates:
        try:
            with psycopg.connect(url, connect_timeout=3):
                return url
        except psycopg.Error:
            continue
    return None


def pg_databases(prefix: str) -> Iterator[Callable[[], str]]:
    """For a session fixture: a factory of fresh PostgreSQL databases (SQLAlchemy URLs) named
    PREFIX_<random>, all dropped at the end."""
    admin = pg_admin_url()
    created: list[str] = []

    def make() -> str:
        if admin is None:
            reason = "PostgreSQL is not reachable on 127.0.0.1:5432 (set AGENTOS_TEST_PG_URL)"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(reason)
            pytest.skip(reason)
        name = f"{prefix}_{secrets.token_hex(6)}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return "postgresql+psycopg://" + admin.split("://", 1)[1].rsplit("/", 1)[0] + "/" + name

    yield make
    if admin is not None:
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
