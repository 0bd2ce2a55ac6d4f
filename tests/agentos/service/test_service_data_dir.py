"""`agentos keys create` and `agentos serve` share one database wherever they run: agentos.db
in $AGENTOS_HOME (else the user's data directory). Serve says which, and so does a 401."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

AGENTOS = [sys.executable, "-m", "agentos.cli"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_keys_and_serve__share_the_database_from_different_directories(tmp_path: Path) -> None:
    home, here, there = tmp_path / "home", tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "AGENTOS_DATABASE_URL"} | {"AGENTOS_HOME": str(home)}
    created = subprocess.run([*AGENTOS, "keys", "create", "--workspace", "acme"], cwd=here, env=env,
                             capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    assert f"stored in {home / 'agentos.db'}" in created.stderr
    port = _free_port()
    server = subprocess.Popen([*AGENTOS, "serve", "--port", str(port), "--log-level", "warning"], cwd=there,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().strip() == f"agentos: database {home / 'agentos.db'}"
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/api/workflows", headers={"Authorization": f"Bearer {key}"})
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "agentos serve did not start"
                time.sleep(0.05)
        assert answer.status_code == 200, answer.text
        refused = httpx.get(f"http://127.0.0.1:{port}/api/workflows", headers={"Authorization": "Bearer aos_live_x"})
        assert refused.status_code == 401
        assert f"reads its keys from {home / 'agentos.db'}" in refused.json()["detail"]
        assert not (here / "agentos.db").exists() and not (there / "agentos.db").exists()
    finally:
        server.terminate()
        server.wait(timeout=10)
