"""Endpoint agents (`agent.url`): a real HTTP server per trial, started, made ready and
stopped by the runner; the world POSTs its events to it, signed as each vendor signs them."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: greeter
task: Greet whoever talks to you.
clock: { limit: 2h }
world:
  slack:
    users: [{ ref: slack_laura, name: laura }]
    channels: [{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }]
people:
  laura:
    name: Laura
    accounts: { slack: $slack_laura }
    listens: [$slack_support]
    replies_after: 10m
    otherwise: Thanks!
world_rules:
  events:
    - at: 30m
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "Hello? anyone there?" }
checks:
  - id: greeted_her
    message: { to: laura, from: $slack_bot }
"""

SERVER = textwrap.dedent('''
    import hashlib, hmac, json, os, sys, threading, urllib.request
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    port = int(os.environ["ANCHA_AGENT_PORT"])
    env_id = "env_someone_else" if "--wrong-id" in sys.argv else os.environ["ANCHA_ENV_ID"]
    state = os.environ["ANCHA_STATE_DIR"]
    secret = os.environ["ANCHA_SLACK_SIGNING_SECRET"]
    with open(os.path.join(state, "port.txt"), "w") as out:
        out.write(str(port))

    def reply(channel, ts):
        body = json.dumps({"channel": channel, "thread_ts": ts, "text": "Hi Laura!"}).encode()
        base = "https://slack.com" if "--real-hostnames" in sys.argv else os.environ["ANCHA_SLACK_URL"]
        req = urllib.request.Request(base + "/api/chat.postMessage", data=body,
            headers={"Authorization": "Bearer " + os.environ["ANCHA_SLACK_TOKEN"],
                     "Content-Type": "application/json; charset=utf-8"})
        assert json.load(urllib.request.urlopen(req))["ok"]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200 if self.path == "/ready" else 404)
            self.send_header("x-ancha-env-id", env_id)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            raw = self.rfile.read(int(self.headers["Content-Length"]))
            base = b"v0:" + self.headers["X-Slack-Request-Timestamp"].encode() + b":" + raw
            good = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
            body = json.loads(raw)
            with open(os.path.join(state, "deliveries.jsonl"), "a") as out:
                out.write(json.dumps({"path": self.path, "type": body["type"],
                                      "signed": hmac.compare_digest(good, self.headers["X-Slack-Signature"])}) + "\\n")
            answer = json.dumps({"challenge": body.get("challenge")}).encode() if body["type"] == "url_verification" else b""
            event = body.get("event") or {}
            first = "--real-hostnames" in sys.argv  # its reply is made before the delivery is answered
            if first and event.get("type") == "message":
                reply(event["channel"], event["ts"])
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            if not first and event.get("type") == "message":
                reply(event["channel"], event["ts"])

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
''')


def _project(tmp_path: Path, config: str, scene: str = SCENE) -> Path:
    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(scene)
    (tmp_path / "server.py").write_text(SERVER)
    (tmp_path / "ancha.yaml").write_text(textwrap.dedent(config))
    return tmp_path


def _run(cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ANCHA, "run", "--no-progress"], cwd=cwd, capture_output=True, text=True, timeout=180)


def _trial(cwd: Path, n: int) -> Path:
    return cwd / ".ancha" / "runs" / "latest" / "greeter" / str(n)


def test_endpoint_agent__started_per_trial_on_its_own_port_gets_signed_slack_events(tmp_path: Path) -> None:
    project = _project(tmp_path, f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/events/{{{{service}}}}"
          start: {sys.executable} server.py
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          idle: 5m
        trials: 2
        parallel: 2
    """)
    ran = _run(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    ports = set()
    for n in (1, 2):
        trial = _trial(project, n)
        checks = json.loads((trial / "checks.json").read_text())
        assert checks["verdict"] == "passed" and checks["status"] == "idle", checks
        deliveries = [json.loads(line) for line in (trial / "state" / "deliveries.jsonl").read_text().splitlines()]
        assert [d["type"] for d in deliveries] == ["url_verification", "event_callback"]
        assert all(d["signed"] and d["path"] == "/events/slack" for d in deliveries)
        ports.add((trial / "state" / "port.txt").read_text())
        traced = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
        posts = [e for e in traced if e["actor"] == "world" and e["path"].startswith("http://")]
        assert [e["status"] for e in posts] == [200, 200] and posts[0]["path"].endswith("/events/slack")
    assert len(ports) == 2


def test_endpoint_agent__its_managed_server_reaches_slack_com_with_real_hostnames(tmp_path: Path) -> None:
    """agent.start gets the proxy and the CA bundle: its reply to https://slack.com, with no base URL, lands."""
    project = _project(tmp_path, f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/events/{{{{service}}}}"
          start: {sys.executable} server.py --real-hostnames
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          idle: 5m
          hostnames: real
        trials: 1
    """)
    ran = _run(project)
    assert ran.returncode == 0, ran.stdout + ran.stderr + (_trial(project, 1) / "agent.log").read_text()
    traced = [json.loads(line) for line in (_trial(project, 1) / "trace.jsonl").read_text().splitlines()]
    replies = [e for e in traced if e["actor"] == "agent" and e["path"] == "/api/chat.postMessage"]
    assert [(e["status"], e.get("host")) for e in replies] == [(200, "slack.com")]


def test_endpoint_agent__a_server_with_the_wrong_env_id_is_a_clear_error(tmp_path: Path) -> None:
    project = _project(tmp_path, f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/events/{{{{service}}}}"
          start: {sys.executable} server.py --wrong-id
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          startup_timeout: 20s
        trials: 1
    """)
    ran = _run(project)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    checks = json.loads((_trial(project, 1) / "checks.json").read_text())
    assert checks["verdict"] == "invalid"
    assert "x-ancha-env-id: env_someone_else" in checks["reason"] and "ANCHA_ENV_ID" in checks["reason"]


def test_endpoint_agent__not_ready_within_startup_timeout(tmp_path: Path) -> None:
    project = _project(tmp_path, f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/events/{{{{service}}}}"
          start: {sys.executable} -c "import time; time.sleep(60)"
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          startup_timeout: 1s
        trials: 1
    """)
    ran = _run(project)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    reason = json.loads((_trial(project, 1) / "checks.json").read_text())["reason"]
    assert "not ready within agent.startup_timeout (1s)" in reason


class _OwnServer:
    """A server the user runs: it takes the setup POST, answers Slack, and says it is done."""

    def __init__(self) -> None:
        self.setups: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        own = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(raw)
                answer = b""
                if self.path == "/setup":
                    own.setups.append(body)
                elif body.get("type") == "url_verification":
                    answer = json.dumps({"challenge": body["challenge"]}).encode()
                else:
                    own.received.append({"headers": dict(self.headers), "body": body, "raw": raw})
                if own.received and own.setups:  # the event came: done, before the delivery is answered
                    session = own.setups[0]["session"]
                    httpx.post(session["done_url"], json={},
                               headers={"Authorization": f"Bearer {session['trial_token']}"})
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


def test_endpoint_agent__own_server_gets_setup_and_ends_the_trial_with_the_done_url(tmp_path: Path) -> None:
    server = _OwnServer()
    try:
        project = _project(tmp_path, f"""
            agent:
              url: "http://127.0.0.1:{server.port}/events/{{{{service}}}}"
              setup_url: "http://127.0.0.1:{server.port}/setup"
              idle: 5m
            trials: 1
        """)
        ran = _run(project)
    finally:
        server.http.shutdown()
    assert ran.returncode == 1, ran.stdout + ran.stderr  # it never greeted her: failed, but run
    checks = json.loads((_trial(project, 1) / "checks.json").read_text())
    assert checks["status"] == "done" and checks["verdict"] == "failed"
    setup = server.setups[0]
    assert setup["task"] == "Greet whoever talks to you."
    assert setup["environment"]["ANCHA_ENV_ID"] == setup["session"]["env_id"]
    assert setup["environment"]["ANCHA_SLACK_URL"].endswith("/slack")
    (delivery,) = server.received
    headers = {k.lower(): v for k, v in delivery["headers"].items()}
    secret = setup["environment"]["ANCHA_SLACK_SIGNING_SECRET"]
    base = b"v0:" + headers["x-slack-request-timestamp"].encode() + b":" + delivery["raw"]
    assert headers["x-slack-signature"] == "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    assert delivery["body"]["event"]["text"] == "Hello? anyone there?"
