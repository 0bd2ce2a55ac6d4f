"""SIGTERM stops `agentos serve` within 5 seconds, even with a stream subscriber and a
client waiting on runs that are stuck (on a long model delay, or on an HTTP server that
never answers); the stuck runs are stored as failed, not running.

The test takes a few seconds: it starts `agentos serve` as a process, as the signal needs.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agentos.keys import create_key

STUCK = [{"id": "stuck", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "hi",
          "output": "answer", "responses": [{"text": "done", "delay_ms": 600_000}]}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(condition: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while not (result := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
    return result


def _answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
        return True
    except httpx.TransportError:
        return False


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_sigterm__stops_the_server_within_5_seconds_with_open_streams_to_stuck_runs(fresh_database_url):
    silent = socket.socket()  # accepts connections (the kernel does) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    hung = [{"id": "hung", "type": "http", "method": "GET", "url": f"http://127.0.0.1:{silent.getsockname()[1]}/x",
             "output": "answer"}]
    key = create_key(fresh_database_url, "shutdown")
    headers = {"Authorization": f"Bearer {key}"}
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "serve", "--port", str(port), "--log-level", "warning"],
        env={**os.environ, "AGENTOS_DATABASE_URL": fresh_database_url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(lambda: _answers(base) or process.poll() is not None, 20, "the server to start")
        assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
        created = httpx.post(f"{base}/api/workflows", json={"name": "Stuck", "nodes": STUCK}, headers=headers)
        assert created.status_code == 201, created.text
        response = httpx.post(f"{base}/api/workflows/Stuck/runs", json={"input": {}, "wait": False}, headers=headers)
        assert response.status_code == 201, response.text
        queued = response.json()
        created = httpx.post(f"{base}/api/workflows", json={"name": "Hung", "nodes": hung}, headers=headers)
        assert created.status_code == 201, created.text
        response = httpx.post(f"{base}/api/workflows/Hung/runs", json={"input": {}, "wait": False}, headers=headers)
        assert response.status_code == 201, response.text
        waited: dict[str, Any] = {}

        def wait_on_a_stuck_run() -> None:
            try:
                waited["response"] = httpx.post(f"{base}/api/workflows/Stuck/runs", json={"input": {}},
                                                headers=headers, timeout=30)
            except httpx.TransportError as exc:
                waited["error"] = exc

        waiter = threading.Thread(target=wait_on_a_stuck_run, daemon=True)
        waiter.start()
        subscriber = connect(f"ws://127.0.0.1:{port}/api/runs/{queued['id']}/stream", additional_headers=headers)
        seen = [json.loads(subscriber.recv(timeout=10)) for _ in range(2)]
        assert [e["type"] for e in seen] == ["run_started", "node_started"]
        _wait_for(lambda: len(httpx.get(f"{base}/api/runs", params={"status": "running"},
                                        headers=headers).json()) == 3, 10, "the three runs to be running")

        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail("agentos serve was still running 5 s after SIGTERM")
        # uvicorn re-raises the signal once it has shut down cleanly: -SIGTERM, or 0.
        assert process.returncode in (0, -signal.SIGTERM), process.stderr.read().decode() if process.stderr else ""
        rest = []
        with pytest.raises(ConnectionClosed):
            while True:
                rest.append(json.loads(subscriber.recv(timeout=5)))
        subscriber.close()
        waiter.join(10)
        assert not waiter.is_alive()
    finally:
        silent.close()
        if process.poll() is None:
            process.kill()
            process.wait(10)

    from agentos.db import Database
    from agentos.models import Run

    db = Database(fresh_database_url, run_migrations=False)
    try:
        with db.read() as session:
            runs = {run.id: run for run in session.query(Run)}
    finally:
        db.dispose()
    assert len(runs) == 3
    assert {run.status for run in runs.values()} == {"failed"}
    assert {run.error for run in runs.values()} == {"interrupted: the server stopped"}
    if rest:  # a subscriber still connected when the run was failed sees the end
        assert rest[-1]["type"] == "run_finished" and rest[-1]["status"] == "failed"
