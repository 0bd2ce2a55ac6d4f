"""A real AgentOS server on a free loopback port (uvicorn in a thread, temp SQLite) and
SDK clients pointed at it with keys created the way `agentos keys create` does."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from agentos_sdk import AgentOS


@dataclass(frozen=True)
class RunningServer:
    url: str
    database_url: str

    def new_key(self, workspace: str) -> str:
        from agentos.keys import create_key

        return create_key(self.database_url, workspace)


@pytest.fixture(scope="session")
def agentos_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    from agentos.api.app import create_app

    database_url = f"sqlite:///{Path(tmp_path_factory.mktemp('agentos')) / 'a.db'}"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(create_app(database_url), log_level="warning", access_log=False, loop="asyncio")
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=lambda: asyncio.run(server.serve(sockets=[sock])), name="agentos-server", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the AgentOS test server did not start")
        time.sleep(0.01)
    yield RunningServer(f"http://127.0.0.1:{port}", database_url)
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture(scope="session")
def api_key(agentos_server: RunningServer) -> str:
    return agentos_server.new_key("sdk-tests")


@pytest.fixture
def client(agentos_server: RunningServer, api_key: str) -> Iterator[AgentOS]:
    with AgentOS(agentos_server.url, api_key=api_key, timeout=30) as sdk:
        yield sdk


REFUND_REPLY = "We'll process your refund today."


def _triage_nodes(reply: str = REFUND_REPLY) -> list[dict[str, Any]]:
    return [
        {
            "id": "draft",
            "type": "llm",
            "provider": "mock",
            "model": "mock-1",
            "prompt": "Reply to {{input.ticket}}",
            "output": "draft_reply",
            "responses": [{"text": reply, "input_tokens": 12, "output_tokens": 8}],
        }
    ]


@pytest.fixture
def triage_nodes() -> Callable[..., list[dict[str, Any]]]:
    """triage_nodes(reply=...) -> one mock-provider LLM node drafting `reply` into draft_reply."""
    return _triage_nodes


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """A workflow name no other test uses (all tests share one workspace)."""
    return lambda stem: f"{stem} {uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_workflow(client: AgentOS, unique_name: Callable[[str], str]) -> Callable[..., dict[str, Any]]:
    """make_workflow(reply=..., checks=..., gate=...) -> a new uniquely named triage workflow."""

    def make(
        reply: str = REFUND_REPLY,
        checks: list[dict[str, Any]] | None = None,
        gate: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        return client.create_workflow(unique_name("Triage"), _triage_nodes(reply), checks=checks, gate=gate)

    return make
