"""Signed webhooks can be told from a replay, as each vendor documents it.

A receiver recognises a delivery it has seen by the vendor's delivery id, which is unique
per event and the same on every retry (Slack's ``event_id``, GitHub's ``X-GitHub-Delivery``,
PagerDuty's ``X-Webhook-Id`` and ``event.id``, Datadog's ``id``), and an old capture by the
signed timestamp where the vendor signs one (Slack: ``X-Slack-Request-Timestamp`` in the
signature's basestring, refused by its SDK past five minutes). The times in the bodies are
the world's simulated time, as its clock says; Slack's signed timestamp is the wall clock's,
since the agent's SDK checks it against its own.

One ``ancha run`` feeds a server the test runs itself: at 10m and at 20m a Slack message, a
GitHub issue, a PagerDuty incident and a Datadog transition. The server answers the first
delivery of each tool 500 (so Slack, PagerDuty and Datadog retry it), everything else 200.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from githubkit.webhooks import verify
from slack_sdk.signature import Clock, SignatureVerifier

ANCHA = [sys.executable, "-m", "ancha.cli"]

SCENE = """
name: twice
task: Watch everything.
clock: { limit: 2h, start: "2026-01-05T09:00:00Z" }
world:
  slack:
    users: [{ ref: slack_laura, name: laura }]
    channels: [{ ref: slack_support, name: support, members: [$slack_laura, $slack_bot] }]
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
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "first" }
        - github.issue: { repo: $github_orders, from: $github_maya, title: First }
        - pagerduty.trigger: { service: $pagerduty_orders, title: first incident }
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
    - at: 20m
      do:
        - slack.message: { channel: $slack_support, from: $slack_laura, text: "second" }
        - github.issue: { repo: $github_orders, from: $github_maya, title: Second }
        - pagerduty.trigger: { service: $pagerduty_orders, title: second incident }
        - datadog.monitor: { monitor: $datadog_orders, state: OK }
checks:
  - id: monitor_ok
    state: { datadog.monitor: $datadog_orders, is: OK }
"""
TEN_MINUTES = 600
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class _Endpoint:
    """Records every delivery with the wall time it came; answers the first of each tool 500."""

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
                status, answer = 200, b""
                if self.path == "/setup":
                    own.setups.append(body)
                elif body.get("type") == "url_verification":
                    answer = json.dumps({"challenge": body["challenge"]}).encode()
                else:
                    service = self.path.rsplit("/", 1)[-1]
                    first = not any(r["service"] == service for r in own.received)
                    own.received.append({"service": service, "at": time.time(), "raw": raw, "body": body,
                                         "headers": {k.lower(): v for k, v in self.headers.items()}})
                    status = 500 if first else 200
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def of(self, service: str) -> list[dict[str, Any]]:
        return [r for r in self.received if r["service"] == service]

    def secret(self, tool: str, key: str = "signing_secret") -> str:
        return str(self.setups[0]["session"]["tools"][tool][key])


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Endpoint]:
    project = tmp_path_factory.mktemp("replay")
    (project / "scenes" / "twice").mkdir(parents=True)
    (project / "scenes" / "twice" / "scene.yaml").write_text(SCENE)
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
    yield server


def _by_event(deliveries: list[dict[str, Any]], key: Any) -> dict[str, list[dict[str, Any]]]:
    """The attempts of each event, by its delivery id (first seen first)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for delivery in deliveries:
        grouped.setdefault(str(key(delivery)), []).append(delivery)
    return grouped


def _near(seconds: float, expected: float) -> bool:
    """Within a second: the clock gives each record a strictly later time, a few ms apart."""
    return abs(seconds - expected) < 1


def _seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def test_slack_delivery__a_capture_replayed_past_five_minutes_is_refused_and_a_retry_keeps_its_event_id(
        run: _Endpoint) -> None:
    secret = run.secret("slack")
    deliveries = run.of("slack")
    events = _by_event(deliveries, lambda d: d["body"]["event_id"])
    assert len(events) == 2  # one event_id per event, the same on each of its attempts
    first, second = events.values()
    assert len(first) == 2 and len(second) == 1  # the first was answered 500 and retried
    assert [a["headers"].get("x-slack-retry-num") for a in first] == [None, "1"]
    assert first[0]["raw"] == first[1]["raw"]
    for attempt in deliveries:
        stamp, signature = attempt["headers"]["x-slack-request-timestamp"], attempt["headers"]["x-slack-signature"]
        when_received = int(attempt["at"])
        at_once = SignatureVerifier(secret, clock=_At(when_received))
        assert at_once.is_valid(attempt["raw"], stamp, signature)  # the SDK takes it as sent
        assert abs(int(stamp) - when_received) <= 5  # signed at the wall clock, which the SDK compares with its own
        replayed = SignatureVerifier(secret, clock=_At(when_received + 5 * 60 + 1))
        assert not replayed.is_valid(attempt["raw"], stamp, signature)  # the same capture, 5 minutes on
        assert not at_once.is_valid(attempt["raw"], str(int(stamp) + 400), signature)  # the timestamp is signed
    assert int(first[1]["headers"]["x-slack-request-timestamp"]) >= int(first[0]["headers"]["x-slack-request-timestamp"])
    times = [attempts[0]["body"]["event_time"] for attempts in (first, second)]
    assert times[0] == int(_seconds("2026-01-05T09:10:00Z")) and times[1] - times[0] == TEN_MINUTES  # simulated


def test_github_delivery__each_event_has_its_own_delivery_guid_under_the_signature(run: _Endpoint) -> None:
    secret = run.secret("github")
    issues = [d for d in run.of("github") if d["headers"]["x-github-event"] == "issues"]
    events = _by_event(issues, lambda d: d["headers"]["x-github-delivery"])
    assert len(events) == len(issues) == 2  # GitHub never redelivers by itself: one attempt each
    for guid, (attempt,) in events.items():
        assert UUID.match(guid)
        assert verify(secret, attempt["raw"], attempt["headers"]["x-hub-signature-256"])
    assert [a[0]["body"]["issue"]["title"] for a in events.values()] == ["First", "Second"]
    created = [_seconds(a[0]["body"]["issue"]["created_at"]) for a in events.values()]
    assert created[0] == _seconds("2026-01-05T09:10:00Z") and created[1] - created[0] == TEN_MINUTES
    all_guids = [d["headers"]["x-github-delivery"] for d in run.of("github")]
    assert len(set(all_guids)) == len(all_guids)


def test_pagerduty_delivery__webhook_id_and_event_id_are_unique_per_event_and_kept_on_retry(run: _Endpoint) -> None:
    deliveries = run.of("pagerduty")
    events = _by_event(deliveries, lambda d: d["headers"]["x-webhook-id"])
    triggered = [a for a in events.values() if a[0]["body"]["event"]["event_type"] == "incident.triggered"]
    assert len(triggered) == 2
    first, second = triggered
    assert len(first) == 2 and first[0]["raw"] == first[1]["raw"]  # retried after the 500, the same bytes
    ids = [attempts[0]["body"]["event"]["id"] for attempts in events.values()]
    assert len(set(ids)) == len(ids)  # event.id: one per event
    assert {a["body"]["event"]["id"] for a in first} == {first[0]["body"]["event"]["id"]}
    occurred = [_seconds(a[0]["body"]["event"]["occurred_at"]) for a in (first, second)]
    assert _near(occurred[0], _seconds("2026-01-05T09:10:00Z")) and _near(occurred[1] - occurred[0], TEN_MINUTES)


def test_datadog_delivery__the_notification_id_is_unique_per_event_and_kept_on_retry(run: _Endpoint) -> None:
    token = run.secret("datadog", "webhook_token")
    deliveries = run.of("datadog")
    assert all(d["headers"]["authorization"] == f"Bearer {token}" for d in deliveries)
    events = _by_event(deliveries, lambda d: d["body"]["id"])
    assert len(events) == 2
    first, second = events.values()
    assert len(first) == 2 and first[0]["raw"] == first[1]["raw"]
    assert [a[0]["body"]["alert_transition"] for a in (first, second)] == ["Triggered", "Recovered"]
    dates = [int(a[0]["body"]["date"]) / 1000 for a in (first, second)]
    assert _near(dates[0], _seconds("2026-01-05T09:10:00Z")) and _near(dates[1] - dates[0], TEN_MINUTES)


class _At(Clock):
    """A receiver's clock at a given Unix second."""

    def __init__(self, now: int) -> None:
        self.at = now

    def now(self) -> float:
        return float(self.at)
