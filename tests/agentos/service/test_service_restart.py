"""A server killed mid-run leaves no run `running`: the restarted server fails it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from websockets.sync.client import connect

from agentos.keys import create_key


@contextmanager
def agentos_serve(database_url: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "AGENTOS_DATABASE_URL": database_url}
    process = subprocess.Popen(
        [sys.executable, "-m", "agentos.cli", "serve", "--port", str(port), "--log-level", "warning"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/api/workflows", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(process.stderr.read().decode() if process.stderr else "no output") from None
                time.sleep(0.05)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(10)


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_restart__a_run_interrupted_by_a_crash_is_failed_when_the_server_comes_back(fresh_database_url):
    key = create_key(fresh_database_url, "restart")
    headers = {"Authorization": f"Bearer {key}"}
    port = _free_port()
    nodes = [{"id": "slow", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "hi",
              "output": "answer", "responses": [{"text": "done", "delay_ms": 30000}]}]
    with agentos_serve(fresh_database_url, port) as first:
        base = f"http://127.0.0.1:{port}"
        httpx.post(f"{base}/api/workflows", json={"name": "Slow", "nodes": nodes}, headers=headers)
        run = httpx.post(f"{base}/api/workflows/Slow/runs", json={"input": {}, "wait": False}, headers=headers).json()
        deadline = time.monotonic() + 10
        while httpx.get(f"{base}/api/runs/{run['id']}", headers=headers).json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    with agentos_serve(fresh_database_url, port):
        after = httpx.get(f"{base}/api/runs/{run['id']}", headers=headers).json()
        assert after["status"] == "failed"
        assert after["error"] == "interrupted by a server restart"
        assert after["finished_at"] is not None and after["evals"] is None
        assert httpx.get(f"{base}/api/runs", params={"status": "running"}, headers=headers).json() == []
        with connect(f"ws://127.0.0.1:{port}/api/runs/{run['id']}/stream?api_key={key}") as socket:
            events = [json.loads(message) for message in socket]
        assert [e["type"] for e in events] == ["run_started", "node_started", "run_finished"]
        assert events[-1]["error"] == "interrupted by a server restart"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
