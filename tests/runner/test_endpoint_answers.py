"""An endpoint agent's answers are read only up to a small cap: readiness, setup, the Slack
URL verification and every event delivery. A server that answers 100 MB (made lazily here,
never held) has its stream cut once the cap is read, and the runner's memory stays flat."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ancha.runner.agents.endpoint import EndpointAgent
from ancha.world.endpoint import ANSWER_READ_MAX

ANCHA = [sys.executable, "-m", "ancha.cli"]
HUGE = 100 * 1024 * 1024
CHUNK = b" " * (64 * 1024)
CUT_BY = 32 * 1024 * 1024
"""What a server may get written before the cut shows: the cap plus both sockets' buffers, far below 100 MB."""


class _Flood:
    """A server whose every answer is 2xx, its JSON (if any) first, then 100 MB of spaces made as sent.
    ``sent`` holds, per request path, the bytes of the answer's body it could write."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int]] = []
        self.begun: list[str] = []
        """The path of each answer begun (list.append is atomic across the server's threads)."""
        self.setups: list[dict[str, Any]] = []
        own = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path == "/gzip":
                    self.bomb()
                else:
                    self.flood(b"")

            def bomb(self) -> None:
                """100 MB of zeros, gzipped as sent (about 100 KB on the wire)."""
                own.begun.append(self.path)
                self.send_response(200)
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Connection", "close")
                self.end_headers()
                packer = zlib.compressobj(9, zlib.DEFLATED, 31)
                written = 0
                try:
                    while written < HUGE:
                        self.wfile.write(packer.compress(bytes(len(CHUNK))))
                        written += len(CHUNK)
                    self.wfile.write(packer.flush())
                except OSError:
                    pass
                finally:
                    own.sent.append((self.path, written))
                    self.close_connection = True

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(raw)
                if self.path == "/setup":
                    own.setups.append(body)
                challenge = body.get("challenge") if isinstance(body, dict) else None
                self.flood(json.dumps({"challenge": challenge}).encode() if challenge else b"")

            def flood(self, head: bytes) -> None:
                own.begun.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head) + HUGE))
                self.end_headers()
                written = 0
                try:
                    self.wfile.write(head)
                    while written < HUGE:
                        self.wfile.write(CHUNK)
                        written += len(CHUNK)
                except OSError:  # the reader hung up: the stream was cut
                    pass
                finally:
                    own.sent.append((self.path, written))
                    self.close_connection = True

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def answered(self) -> list[tuple[str, int]]:
        """``sent`` once every answer begun has ended (the server notices a cut a moment after it)."""
        deadline = time.monotonic() + 30
        while len(self.sent) < len(self.begun):
            assert time.monotonic() < deadline, f"only {len(self.sent)} of {len(self.begun)} answers ended in 30s"
            time.sleep(0.01)
        return list(self.sent)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def flood() -> Iterator[_Flood]:
    server = _Flood()
    yield server
    server.http.shutdown()
    server.http.server_close()


CONTEXT = {"env_id": "env_flood", "trial": 1, "scene": "s", "trial_token": "t", "done_url": "http://127.0.0.1:9/d",
           "context_url": "http://127.0.0.1:9/c", "events": {"url": "http://127.0.0.1:9/e", "token": "e"},
           "tools": {}, "task": "nothing"}


@pytest.mark.parametrize("which", ["ready_url", "setup_url", "ready_url gzip"])
def test_endpoint_agent__a_100_mb_readiness_or_setup_answer_is_read_only_to_the_cap(flood: _Flood, which: str,
                                                                                     tmp_path: Path) -> None:
    ready = {"ready_url": "/ready", "ready_url gzip": "/gzip"}.get(which)  # gzip: 100 MB once inflated
    agent = EndpointAgent(start=None, ready_url=flood.url(ready) if ready else None,
                          setup_url=flood.url("/setup") if which == "setup_url" else None, cwd=tmp_path, env={},
                          log=io.BytesIO(), env_id="env_flood", startup_timeout=30)
    tracemalloc.start()
    try:
        asyncio.run(agent.start(CONTEXT))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB while reading the answer"
    if which != "ready_url gzip":  # zeros gzipped fill no socket buffer: the server never notices the cut
        (path, written), = flood.answered()
        assert written < CUT_BY, f"{written / 2**20:.0f} MiB of {path}'s answer were read"


SCENE = """
name: greeter
task: Greet whoever talks to you.
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_laura, name: laura }]
    channels: [{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }]
world_rules:
  events:
    - at: 30m
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "Hello? anyone there?" }
checks:
  - id: posted
    trace: { called: "POST /api/chat.postMessage" }
"""


def test_endpoint_delivery__100_mb_answers_to_the_handshake_and_each_event_are_cut_at_the_cap(
        flood: _Flood, tmp_path: Path) -> None:
    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (tmp_path / "ancha.yaml").write_text(textwrap.dedent(f"""
        agent:
          url: "{flood.url('/events/{{service}}')}"
          setup_url: "{flood.url('/setup')}"
          idle: 30m
        trials: 1
        min_pass_rate: 0
    """))
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    trial = tmp_path / ".ancha" / "runs" / "latest" / "greeter" / "1"
    checks = json.loads((trial / "checks.json").read_text())
    assert checks["verdict"] == "failed" and checks["status"] == "idle", checks  # ran to its end, the agent silent
    answers = flood.answered()
    paths = [path for path, _ in answers]
    assert paths.count("/events/slack") >= 2  # the URL verification (answered from the cut answer), the message
    for path, written in answers:
        assert written < CUT_BY, f"{written / 2**20:.0f} MiB of {path}'s answer were read"
    traced = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
    delivered = [e for e in traced if e["actor"] == "world" and e["path"].endswith("/events/slack")]
    assert delivered and all(e["status"] == 200 for e in delivered)
    assert ANSWER_READ_MAX == 64 * 1024
