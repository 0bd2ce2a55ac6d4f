"""An unchanged slack_bolt app served over HTTP is an endpoint agent: Bolt answers Ancha's
url_verification, accepts the Events API requests only because their X-Slack-Signature is
right (it verifies every request with the signing secret), and replies through slack_sdk."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from test_endpoint_agents import SCENE

ANCHA = [sys.executable, "-m", "ancha.cli"]

BOLT_APP = textwrap.dedent('''
    import os
    import uvicorn
    from slack_bolt.app.async_app import AsyncApp
    from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
    from slack_sdk.web.async_client import AsyncWebClient
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    client = AsyncWebClient(token=os.environ["ANCHA_SLACK_TOKEN"], base_url=os.environ["ANCHA_SLACK_URL"] + "/api/")
    app = AsyncApp(client=client, signing_secret=os.environ["ANCHA_SLACK_SIGNING_SECRET"])

    @app.event("message")
    async def greet(event, say):
        await say(text="Hi Laura! How can I help?", thread_ts=event["ts"])

    handler = AsyncSlackRequestHandler(app)

    async def events(request):
        return await handler.handle(request)

    async def ready(request):
        return PlainTextResponse("ok", headers={"x-ancha-env-id": os.environ["ANCHA_ENV_ID"]})

    api = Starlette(routes=[Route("/slack/events", events, methods=["POST"]), Route("/ready", ready)])
    uvicorn.run(api, host="127.0.0.1", port=int(os.environ["ANCHA_AGENT_PORT"]), log_level="warning")
''')


def test_bolt_over_http__an_unchanged_bolt_app_verifies_the_events_and_answers(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (tmp_path / "bolt_app.py").write_text(BOLT_APP)
    (tmp_path / "ancha.yaml").write_text(textwrap.dedent(f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/slack/events"
          start: {sys.executable} bolt_app.py
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          slack_transport: http
          idle: 5m
        trials: 1
    """))
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    trial = tmp_path / ".ancha" / "runs" / "latest" / "greeter" / "1"
    log = (trial / "agent.log").read_text() if (trial / "agent.log").exists() else ""
    assert ran.returncode == 0, ran.stdout + ran.stderr + log
    traced = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
    deliveries = [e for e in traced if e["actor"] == "world" and e["path"].endswith("/slack/events")]
    assert [e["status"] for e in deliveries] == [200, 200]  # url_verification, then the event: both accepted
    replies = [e for e in traced if e["actor"] == "agent" and e["path"] == "/api/chat.postMessage" and e["status"] == 200]
    assert len(replies) == 1


FLAKY_SERVER = textwrap.dedent('''
    import json, os
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    state = os.environ["ANCHA_STATE_DIR"]
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("x-ancha-env-id", os.environ["ANCHA_ENV_ID"])
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body["type"] == "url_verification":
                answer = json.dumps({"challenge": body["challenge"]}).encode()
                status = 200
            else:
                seen.append(body["event_id"])
                with open(os.path.join(state, "attempts.jsonl"), "a") as out:
                    out.write(json.dumps({"event_id": body["event_id"],
                                          "retry_num": self.headers.get("X-Slack-Retry-Num"),
                                          "retry_reason": self.headers.get("X-Slack-Retry-Reason")}) + "\\n")
                status = 500 if len(seen) == 1 else 200
                answer = b""
            self.send_response(status)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

    ThreadingHTTPServer(("127.0.0.1", int(os.environ["ANCHA_AGENT_PORT"])), Handler).serve_forever()
''')


def test_events_api__a_failed_delivery_is_retried_with_slacks_retry_headers(tmp_path: Path) -> None:
    (tmp_path / "scenes" / "greeter").mkdir(parents=True)
    (tmp_path / "scenes" / "greeter" / "scene.yaml").write_text(SCENE)
    (tmp_path / "server.py").write_text(FLAKY_SERVER)
    (tmp_path / "ancha.yaml").write_text(textwrap.dedent(f"""
        agent:
          url: "http://127.0.0.1:{{{{agent.port}}}}/slack/events"
          start: {sys.executable} server.py
          ready_url: "http://127.0.0.1:{{{{agent.port}}}}/ready"
          slack_transport: http
          idle: 5m
        trials: 1
        min_pass_rate: 0
    """))
    ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    trial = tmp_path / ".ancha" / "runs" / "latest" / "greeter" / "1"
    attempts = [json.loads(line) for line in (trial / "state" / "attempts.jsonl").read_text().splitlines()]
    assert len(attempts) == 2 and attempts[0]["event_id"] == attempts[1]["event_id"]
    assert (attempts[0]["retry_num"], attempts[0]["retry_reason"]) == (None, None)
    assert (attempts[1]["retry_num"], attempts[1]["retry_reason"]) == ("1", "http_error")
    traced = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
    statuses = [e["status"] for e in traced if e["actor"] == "world" and e["path"].endswith("/slack/events")]
    assert statuses == [200, 500, 200]  # url_verification, the failed attempt, its retry
