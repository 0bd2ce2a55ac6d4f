"""AgentOS on many processes: real `agentos serve` and `agentos worker` processes on one
PostgreSQL database, with a real broker (PostgreSQL LISTEN/NOTIFY or Redis pub/sub).

Followers are given AGENTOS_BROKER_RESYNC_SECONDS=600, so that they never fall back to
reading the database on their own: what reaches them within the tests' deadlines came
through the broker. Runs wait on a gate (an HTTP node against a server the test opens),
so a follower is always subscribed while its run is still going.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from sqlalchemy import select, text
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agentos.db import Database
from agentos.instances import DIED, LOCK_CLASS, _lock_key
from agentos.keys import create_key
from agentos.models import ServerInstance

REDIS_URL = os.environ.get("AGENTOS_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
FOLLOW_EVERY_EVENT = {"AGENTOS_BROKER_RESYNC_SECONDS": "600"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(condition: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return result


def _redis_url() -> str:
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except redis.RedisError:
        reason = f"Redis is not reachable at {REDIS_URL} (set AGENTOS_TEST_REDIS_URL)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return REDIS_URL


class Agentos:
    """An `agentos ...` process; `.url` is its API when it serves one."""

    def __init__(self, args: list[str], env: dict[str, str], port: int | None = None) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}" if port else ""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "agentos.cli", *args],
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def ws(self, run_id: str, key: str) -> str:
        return self.url.replace("http://", "ws://") + f"/api/runs/{run_id}/stream?api_key={key}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


@contextmanager
def agentos(args: list[str], env: dict[str, str], *, serves: bool = True) -> Iterator[Agentos]:
    port = _free_port() if serves else None
    process = Agentos([*args, "--port", str(port), "--log-level", "warning"] if serves else args, env, port)
    try:
        if serves:
            def answers() -> bool:
                assert process.process.poll() is None, process.process.stderr.read().decode()  # type: ignore[union-attr]
                try:
                    return httpx.get(process.url + "/api/workflows", timeout=1).status_code == 401
                except httpx.TransportError:
                    return False

            _wait_for(answers, 30, "agentos serve to answer")
        yield process
    finally:
        process.stop()


class Gate:
    """An HTTP endpoint that answers once the test opens it: a run's `http` node waits on it."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.app = Starlette(routes=[Route("/gate", self.gate)])

    async def gate(self, _: Request) -> JSONResponse:
        deadline = time.monotonic() + 60
        while not self.opened.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return JSONResponse({"open": self.opened.is_set()})


@pytest.fixture
def gate(serve_app: Any) -> Iterator[tuple[Gate, str]]:
    gate = Gate()
    with serve_app(gate.app) as server:
        yield gate, f"{server.url}/gate"
        gate.opened.set()  # answer a waiting request, so the server stops at once


def gated_workflow(gate_url: str) -> dict[str, Any]:
    return {
        "name": "Gated",
        "nodes": [
            {"id": "wait", "type": "http", "method": "GET", "url": gate_url, "output": "gate"},
            {"id": "reply", "type": "set", "values": {"draft_reply": "'We will process your refund.'"}},
        ],
        "checks": [{"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}],
    }


def read_until_closed(socket: Any) -> list[dict[str, Any]]:
    events = []
    try:
        while True:
            events.append(json.loads(socket.recv(timeout=20)))
    except ConnectionClosed:
        return events


EVERY_EVENT = ["run_started", "node_started", "node_finished", "node_started", "node_finished",
               "run_finished", "run_evaluated"]


def _broker_url(kind: str, database_url: str) -> str:
    return _redis_url() if kind == "redis" else database_url.replace("postgresql+psycopg://", "postgresql://")


@pytest.mark.parametrize("broker", ["postgresql", "redis"])
def test_processes__a_subscriber_on_process_b_sees_a_run_executed_on_process_a(broker, pg_database, gate):
    gate_state, gate_url = gate
    database_url = pg_database()
    key = create_key(database_url, "processes")
    headers = {"Authorization": f"Bearer {key}"}
    env = {"AGENTOS_DATABASE_URL": database_url, "AGENTOS_BROKER_URL": _broker_url(broker, database_url),
           **FOLLOW_EVERY_EVENT}
    with agentos(["serve"], env) as a, agentos(["serve"], env) as b:
        assert httpx.post(f"{a.url}/api/workflows", json=gated_workflow(gate_url), headers=headers).status_code == 201
        run = httpx.post(f"{a.url}/api/workflows/Gated/runs", json={"input": {}, "wait": False}, headers=headers).json()
        with connect(b.ws(run["id"], key)) as follower:
            first = json.loads(follower.recv(timeout=20))
            assert first["type"] == "run_started"
            gate_state.opened.set()
            events = [first, *read_until_closed(follower)]
        assert [e["type"] for e in events] == EVERY_EVENT
        assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
        assert events[-1]["passed"] == 1 and events[-1]["total"] == 1
        assert httpx.get(f"{b.url}/api/runs/{run['id']}", headers=headers).json()["status"] == "success"

        with connect(b.ws(run["id"], key)) as late:
            assert read_until_closed(late) == events


def test_worker__runs_go_through_the_queue_and_a_killed_worker_leaves_its_run_failed(pg_database, gate):
    _, gate_url = gate
    database_url = pg_database()
    key = create_key(database_url, "queue")
    headers = {"Authorization": f"Bearer {key}"}
    env = {"AGENTOS_DATABASE_URL": database_url,
           "AGENTOS_BROKER_URL": _broker_url("postgresql", database_url),
           "AGENTOS_QUEUE_URL": _redis_url(),
           "AGENTOS_QUEUE_NAME": f"agentos-test:{secrets.token_hex(4)}",
           **FOLLOW_EVERY_EVENT}
    with agentos(["serve"], env) as api:
        with agentos(["worker", "--concurrency", "4"], env, serves=False) as worker:
            instant = {"name": "Instant", "nodes": [{"id": "s", "type": "set", "values": {"x": "1 + 1"}}],
                       "checks": [{"name": "two", "type": "expression", "value": "x == 2"}]}
            assert httpx.post(f"{api.url}/api/workflows", json=instant, headers=headers).status_code == 201
            done = httpx.post(f"{api.url}/api/workflows/Instant/runs", json={"input": {}}, headers=headers,
                              timeout=30).json()
            assert (done["status"], done["state"], done["evals"]["passed"]) == ("success", {"x": 2}, 1)

            assert httpx.post(f"{api.url}/api/workflows", json=gated_workflow(gate_url), headers=headers).status_code == 201
            run = httpx.post(f"{api.url}/api/workflows/Gated/runs", json={"input": {}, "wait": False},
                             headers=headers).json()
            assert run["status"] == "queued"
            _wait_for(lambda: httpx.get(f"{api.url}/api/runs/{run['id']}", headers=headers).json()["status"]
                      == "running", 20, "the worker to start the run")
            with connect(api.ws(run["id"], key)) as follower:
                worker.process.send_signal(signal.SIGKILL)
                worker.process.wait(10)
                events = read_until_closed(follower)
        failed = httpx.get(f"{api.url}/api/runs/{run['id']}", headers=headers).json()
        assert (failed["status"], failed["error"], failed["evals"]) == ("failed", DIED, None)
        assert [e["type"] for e in events][-1] == "run_finished" and events[-1]["error"] == DIED
        metrics = httpx.get(f"{api.url}/api/dashboard/metrics", headers=headers).json()
        assert (metrics["total_runs"], metrics["success_rate"], metrics["evaluated_runs"]) == (2, 50.0, 1)


def test_serve_workers__two_processes_share_the_port_and_stop_together(pg_database):
    database_url = pg_database()
    key = create_key(database_url, "workers")
    headers = {"Authorization": f"Bearer {key}"}
    env = {"AGENTOS_DATABASE_URL": database_url, "AGENTOS_BROKER_URL": _broker_url("postgresql", database_url)}
    db = Database(database_url, run_migrations=False)
    try:
        with agentos(["serve", "--workers", "2"], env) as served:
            labels = _wait_for(lambda: sorted(_labels(db)) if len(_labels(db)) == 2 else None, 30,
                               "both API processes to register")
            assert [label.rsplit("/", 1)[1] for label in labels] == ["0", "1"]
            plain = {"name": "Plain", "nodes": [{"id": "s", "type": "set", "values": {"x": "'ok'"}}]}
            assert httpx.post(f"{served.url}/api/workflows", json=plain, headers=headers).status_code == 201
            with httpx.Client(base_url=served.url, headers=headers) as client:
                runs = [client.post("/api/workflows/Plain/runs", json={"input": {}}).json() for _ in range(10)]
            assert {r["status"] for r in runs} == {"success"}
            served.process.send_signal(signal.SIGTERM)
            served.process.wait(20)
            assert served.process.returncode == 0
        assert _labels(db) == []
    finally:
        db.dispose()


def _labels(db: Database) -> list[str]:
    with db.read() as session:
        return list(session.scalars(select(ServerInstance.label)))


def test_serve__an_unsupported_broker_url_is_refused_with_the_schemes_it_takes(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "agentos.cli", "serve", "--port", str(_free_port())],
        env={**os.environ, "AGENTOS_DATABASE_URL": f"sqlite:///{tmp_path / 'agentos.db'}",
             "AGENTOS_BROKER_URL": "amqp://guest@127.0.0.1:5672"},
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert "AGENTOS_BROKER_URL 'amqp': unsupported broker; use postgresql://" in result.stderr
    assert "Traceback" not in result.stderr


def test_worker__without_a_queue_url_says_how_to_give_one(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "AGENTOS_QUEUE_URL"}
    result = subprocess.run(
        [sys.executable, "-m", "agentos.cli", "worker", "--database-url", f"sqlite:///{tmp_path / 'agentos.db'}"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "no queue: pass --queue-url redis://HOST:6379/0 or set AGENTOS_QUEUE_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_processes__a_process_that_lost_its_database_connection_registers_again_and_keeps_running_runs(
    pg_database, gate
):
    """A database restart drops every process's lock connection; each takes its lock again and
    registers again, so runs it starts afterwards are not failed by its peers."""
    gate_state, gate_url = gate
    database_url = pg_database()
    key = create_key(database_url, "relock")
    headers = {"Authorization": f"Bearer {key}"}
    env = {"AGENTOS_DATABASE_URL": database_url, "AGENTOS_BROKER_URL": _broker_url("postgresql", database_url)}
    db = Database(database_url, run_migrations=False)
    try:
        with agentos(["serve"], env) as a, agentos(["serve"], env):
            a_id = _wait_for(lambda: _instance_with_port(db, a.port), 20, "process A to register")
            with db.engine.connect() as connection:
                connection.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                    " AND classid = :c AND objid = :k AND objsubid = 2"
                ), {"c": LOCK_CLASS, "k": _lock_key(a_id)})
            _wait_for(lambda: _lock_held(db, a_id), 20, "process A to take its lock again")
            _wait_for(lambda: _instance_with_port(db, a.port) == a_id, 20, "process A to be registered")
            assert httpx.post(f"{a.url}/api/workflows", json=gated_workflow(gate_url), headers=headers).status_code == 201
            run = httpx.post(f"{a.url}/api/workflows/Gated/runs", json={"input": {}, "wait": False},
                             headers=headers).json()
            with connect(a.ws(run["id"], key)) as follower:
                assert json.loads(follower.recv(timeout=20))["type"] == "run_started"
                gate_state.opened.set()
                events = read_until_closed(follower)
            assert events[-2]["type"] == "run_finished" and events[-2]["status"] == "success"
    finally:
        db.dispose()


def _instance_with_port(db: Database, port: int | None) -> str | None:
    with db.read() as session:
        return session.scalar(select(ServerInstance.id).where(ServerInstance.label.endswith(f":{port}")))


def _lock_held(db: Database, instance_id: str) -> bool:
    with db.engine.connect() as connection:
        return bool(connection.scalar(text(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = :c AND objid = :k"
            " AND objsubid = 2 AND granted"
        ), {"c": LOCK_CLASS, "k": _lock_key(instance_id)}))
