"""Endpoint agents get GitHub, PagerDuty and Datadog events as each vendor's webhooks: the
body the feed carries, the vendor's headers and signature, and the vendor's retries.

One ``ancha run`` feeds a server the test runs itself (``agent.setup_url``): at 10m a person
opens an issue, PagerDuty triggers an incident and a Datadog monitor alerts. The server
answers the first PagerDuty and the first Datadog delivery 500, everything else 200.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from githubkit.webhooks import parse, verify

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: paged
task: Watch the repository, the pager and the monitors.
clock: { limit: 2h }
world:
  github:
    users: [{ ref: github_maya, login: maya, name: Maya Chen }]
    repos:
      - { ref: github_orders, name: acme/orders, files: { README.md: "# orders\\n" } }
  pagerduty:
    users: [{ ref: pagerduty_maya, name: Maya Chen, email: maya@acme.test }]
    escalation_policies:
      - { ref: pagerduty_policy, name: orders, rules: [{ delay: 30m, targets: [$pagerduty_maya] }] }
    services:
      - { ref: pagerduty_orders, name: orders, escalation_policy: $pagerduty_policy }
  datadog:
    monitors:
      - ref: datadog_orders
        name: orders p99 latency
        type: query alert
        query: "avg(last_5m):avg:orders.latency.p99{service:orders} > 2000"
        message: "orders p99 latency is above 2s"
world_rules:
  events:
    - at: 10m
      do:
        - github.issue: { repo: $github_orders, from: $github_maya, title: Orders are slow }
        - pagerduty.trigger: { service: $pagerduty_orders, title: orders p99 latency above 2s }
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
checks:
  - id: monitor_ok
    state: { datadog.monitor: $datadog_orders, is: OK }
"""


class _Endpoint:
    """The agent's server: records every delivery, fails the first of PagerDuty and Datadog."""

    def __init__(self) -> None:
        self.setups: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        own = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                status = 200
                if self.path == "/setup":
                    own.setups.append(json.loads(raw))
                else:
                    service = self.path.rsplit("/", 1)[-1]
                    first = not any(r["service"] == service for r in own.received)
                    own.received.append({"service": service, "headers": {k.lower(): v for k, v in self.headers.items()},
                                         "raw": raw})
                    if first and service in ("pagerduty", "datadog"):
                        status = 500
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def of(self, service: str) -> list[dict[str, Any]]:
        return [r for r in self.received if r["service"] == service]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_Endpoint, Path]]:
    project = tmp_path_factory.mktemp("webhooks")
    (project / "scenes" / "paged").mkdir(parents=True)
    (project / "scenes" / "paged" / "scene.yaml").write_text(SCENE)
    server = _Endpoint()
    (project / "ancha.yaml").write_text(textwrap.dedent(f"""
        agent:
          url: "http://127.0.0.1:{server.port}/events/{{{{service}}}}"
          setup_url: "http://127.0.0.1:{server.port}/setup"
          idle: 30m
        trials: 1
        min_pass_rate: 0
    """))
    try:
        ran = subprocess.run([*ANCHA, "run", "--no-progress"], cwd=project, capture_output=True, text=True,
                             timeout=240)
    finally:
        server.http.shutdown()
    assert ran.returncode == 0, ran.stdout + ran.stderr
    yield server, project / ".ancha" / "runs" / "latest" / "paged" / "1"


def _credentials(server: _Endpoint, tool: str) -> dict[str, str]:
    tools: dict[str, dict[str, str]] = server.setups[0]["session"]["tools"]
    return tools[tool]


def _world_posts(trial: Path, service: str) -> list[dict[str, Any]]:
    traced = [json.loads(line) for line in (trial / "trace.jsonl").read_text().splitlines()]
    return [e for e in traced if e["actor"] == "world" and e["path"].endswith(f"/events/{service}")]


def _seconds_between(first: dict[str, Any], then: dict[str, Any]) -> float:
    at = [datetime.fromisoformat(str(e["at"]).replace("Z", "+00:00")) for e in (first, then)]
    return (at[1] - at[0]).total_seconds()


def test_github_webhook__verified_by_githubkit_and_parsed_as_its_event(run: tuple[_Endpoint, Path]) -> None:
    server, trial = run
    secret = _credentials(server, "github")["signing_secret"]
    (opened,) = [r for r in server.of("github") if r["headers"]["x-github-event"] == "issues"]
    headers = opened["headers"]
    assert verify(secret, opened["raw"], headers["x-hub-signature-256"])
    assert verify(secret, opened["raw"], headers["x-hub-signature"])
    assert not verify("not-the-secret", opened["raw"], headers["x-hub-signature-256"])
    assert headers["user-agent"].startswith("GitHub-Hookshot/") and headers["x-github-delivery"]
    event = parse("issues", opened["raw"])
    assert event.action == "opened" and event.issue.title == "Orders are slow"
    assert [e["status"] for e in _world_posts(trial, "github")] == [200] * len(server.of("github"))


def test_pagerduty_webhook__signed_v1_and_retried_after_a_500_with_the_same_webhook_id(
        run: tuple[_Endpoint, Path]) -> None:
    server, trial = run
    secret = _credentials(server, "pagerduty")["signing_secret"]
    assert server.setups[0]["environment"]["ANCHA_PAGERDUTY_SIGNING_SECRET"] == secret
    failed, retried = server.of("pagerduty")[:2]
    for attempt in (failed, retried):
        headers = attempt["headers"]
        # PagerDuty's own verification: any comma-separated v1= signature equal to the body's HMAC
        expected = "v1=" + hmac.new(secret.encode(), attempt["raw"], hashlib.sha256).hexdigest()
        assert any(hmac.compare_digest(expected, s) for s in headers["x-pagerduty-signature"].split(","))
        assert headers["user-agent"] == "PagerDuty-Webhook/V3.0"
        assert headers["content-type"] == "application/json"
        assert headers["x-webhook-subscription"].startswith("P")
    assert failed["raw"] == retried["raw"]
    assert failed["headers"]["x-webhook-id"] == retried["headers"]["x-webhook-id"]
    event = json.loads(retried["raw"])["event"]
    assert event["event_type"] == "incident.triggered" and event["data"]["title"] == "orders p99 latency above 2s"
    posts = _world_posts(trial, "pagerduty")
    assert [e["status"] for e in posts[:2]] == [500, 200]
    assert posts[0]["query"]["attempt"] == "0"
    assert (posts[1]["query"]["attempt"], posts[1]["query"]["reason"]) == ("1", "http_error")
    assert posts[0]["query"]["delivery"] == posts[1]["query"]["delivery"] == failed["headers"]["x-webhook-id"]
    assert _seconds_between(posts[0], posts[1]) >= 80  # the first retry waits 80 simulated seconds


def test_datadog_webhook__carries_the_webhook_token_and_is_retried_after_a_500(run: tuple[_Endpoint, Path]) -> None:
    server, trial = run
    token = _credentials(server, "datadog")["webhook_token"]
    failed, retried = server.of("datadog")[:2]
    for attempt in (failed, retried):
        assert attempt["headers"]["authorization"] == f"Bearer {token}"
        assert attempt["headers"]["content-type"] == "application/json"
    assert failed["raw"] == retried["raw"]
    body = json.loads(retried["raw"])
    assert body["alert_transition"] == "Triggered" and body["title"] == "[Triggered] orders p99 latency"
    posts = _world_posts(trial, "datadog")
    assert [e["status"] for e in posts[:2]] == [500, 200]
    assert _seconds_between(posts[0], posts[1]) >= 10  # simulated seconds
