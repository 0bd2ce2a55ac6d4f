"""Fixtures: the AgentOS service on a loopback port, over SQLite and over PostgreSQL.

Each test session (each xdist worker) gets its own SQLite file and its own PostgreSQL
database (agentos_test_<random>, dropped afterwards); each test gets its own workspace
and key, so tests never see each other's data. Without a reachable PostgreSQL the
PostgreSQL half is skipped, or fails when CI=true.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tests.agentos.servers import ServerThread, free_port, pg_databases  # noqa: F401  (tests import them from here)

from agentos.api.app import create_app
from agentos.db import Database
from agentos.keys import issue_key


@pytest.fixture(scope="session")
def pg_database() -> Iterator[Callable[[], str]]:
    """A factory of fresh PostgreSQL databases (SQLAlchemy URLs), all dropped at the end."""
    yield from pg_databases("agentos_test")


@pytest.fixture
def fresh_database_url(request: pytest.FixtureRequest, tmp_path: Any, pg_database: Callable[[], str]) -> str:
    """A database nobody else uses, for tests that start and stop servers themselves."""
    backend = getattr(request, "param", "sqlite")
    if backend == "postgresql":
        return pg_database()
    return f"sqlite:///{tmp_path / 'agentos.db'}"


@pytest.fixture(scope="session", params=["sqlite", "postgresql"])
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, pg_database: Callable[[], str]
) -> str:
    if request.param == "postgresql":
        return pg_database()
    return f"sqlite:///{tmp_path_factory.mktemp('agentos') / 'agentos.db'}"


@pytest.fixture(scope="session")
def blob_folder(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Where the session's service keeps uploaded runs' files."""
    return tmp_path_factory.mktemp("blobs")


@pytest.fixture(scope="session")
def service(database_url: str, blob_folder: Any) -> Iterator[ServerThread]:
    with ServerThread(create_app(database_url, blob_url=f"file://{blob_folder}")) as server:
        yield server


class Api(httpx.Client):
    """An httpx client for one fresh workspace; `.key` is its API key."""

    key: str
    database_url: str


@pytest.fixture(scope="session")
def key_database(service: ServerThread, database_url: str) -> Iterator[Database]:
    """The service's database, for issuing keys (the server has migrated it)."""
    db = Database(database_url, run_migrations=False)
    yield db
    db.dispose()


@pytest.fixture
def new_api(service: ServerThread, database_url: str, key_database: Database) -> Iterator[Callable[[], Api]]:
    """Clients, each for a new workspace of its own."""
    clients: list[Api] = []

    def make() -> Api:
        key = issue_key(key_database, f"ws-{secrets.token_hex(4)}")
        client = Api(base_url=service.url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
        client.key = key
        client.database_url = database_url
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def api(new_api: Callable[[], Api]) -> Api:
    return new_api()


class ModelStub:
    """A stand-in for the OpenAI and Anthropic HTTP APIs, speaking their wire protocol."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_with: tuple[int, dict[str, Any]] | None = None
        self.reply = "We'll process your refund today."
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat_completions, methods=["POST"]),
                Route("/v1/messages", self.messages, methods=["POST"]),
                Route("/orders/{order_id}", self.order, methods=["GET", "POST"]),
            ]
        )

    async def chat_completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({"path": "/v1/chat/completions", "headers": dict(request.headers), "body": body})
        if self.fail_with:
            return JSONResponse(self.fail_with[1], status_code=self.fail_with[0])
        return JSONResponse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.reply}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
            }
        )

    async def messages(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({"path": "/v1/messages", "headers": dict(request.headers), "body": body})
        if self.fail_with:
            return JSONResponse(self.fail_with[1], status_code=self.fail_with[0])
        return JSONResponse(
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": self.reply}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 2000, "output_tokens": 100},
            }
        )

    async def order(self, request: Request) -> JSONResponse:
        body = await request.json() if request.method == "POST" else None
        return JSONResponse({"order_id": request.path_params["order_id"], "status": "shipped", "echo": body})


@pytest.fixture(scope="session")
def model_stub_server() -> Iterator[tuple[ModelStub, ServerThread]]:
    stub = ModelStub()
    with ServerThread(stub.app) as server:
        yield stub, server


@pytest.fixture
def model_stub(
    model_stub_server: tuple[ModelStub, ServerThread], monkeypatch: pytest.MonkeyPatch
) -> Iterator[ModelStub]:
    stub, server = model_stub_server
    stub.requests.clear()
    stub.fail_with = None
    stub.url = server.url  # type: ignore[attr-defined]
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    yield stub


# The reference's support workflow: a mock model classifies and drafts a reply.
REPLY = "We'll process your refund today."

SUPPORT_NODES: list[dict[str, Any]] = [
    {
        "id": "classify",
        "type": "llm",
        "provider": "mock",
        "model": "gpt-4o-mini",
        "prompt": "Classify this ticket: {{input.ticket}}",
        "output": "category",
        "responses": [
            {"match": "crash", "text": "technical", "input_tokens": 40, "output_tokens": 1},
            {"text": "refund", "input_tokens": 40, "output_tokens": 1},
        ],
    },
    {"id": "order", "type": "set", "values": {"order_id": "input.get('order_id', 'GB204815')"}},
    {
        "id": "draft",
        "type": "llm",
        "provider": "mock",
        "model": "gpt-4o-mini",
        "system": "You are a support agent.",
        "prompt": "Reply to the {{category}} ticket about order {{order_id}}: {{input.ticket}}",
        "output": "draft_reply",
        "responses": [
            {"match": "crash", "text": "Traceback (most recent call last): oops", "input_tokens": 1200,
             "output_tokens": 10},
            {"text": REPLY, "input_tokens": 1200, "output_tokens": 300},
        ],
    },
]

SIX_CHECKS: list[dict[str, Any]] = [
    {"name": "Mentions the refund", "type": "contains", "target": "draft_reply", "value": "refund"},
    {"name": "No internal error leaked", "type": "not_contains", "target": "draft_reply", "value": "Traceback"},
    {"name": "Category is known", "type": "regex", "target": "category", "value": "^(billing|refund|technical)$"},
    {"name": "Under budget", "type": "max_cost_usd", "value": 0.05},
    {"name": "Under 8 seconds", "type": "max_duration_ms", "value": 8000},
    {"name": "Reply is substantial", "type": "expression", "value": "len(draft_reply) > 40"},
]


@pytest.fixture
def support_workflow(api: Api) -> dict[str, Any]:
    response = api.post(
        "/api/workflows",
        json={"name": "Support Triage Crew", "nodes": SUPPORT_NODES, "checks": SIX_CHECKS},
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


@pytest.fixture
def six_checks() -> list[dict[str, Any]]:
    return [dict(c) for c in SIX_CHECKS]


@pytest.fixture
def support_nodes() -> list[dict[str, Any]]:
    return [dict(n) for n in SUPPORT_NODES]


@pytest.fixture
def serve_app() -> Callable[[Any], ServerThread]:
    """Serve another ASGI app on a loopback port: `with serve_app(app) as server: ...`."""
    return ServerThread
