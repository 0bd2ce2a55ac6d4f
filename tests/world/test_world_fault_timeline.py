"""A fault across Datadog and PagerDuty on the simulated clock, from a scene file: nothing is
wrong before it starts; at its start the monitor alerts and an incident pages the first
rule of the service's policy (both reach the agent's feed); nobody acknowledges, so it
escalates after the rule's delay; when resolved_when holds the monitor recovers, and the
incident stays open until someone resolves it. The monitor is a metric monitor: as in Datadog
it recovers once its window (last 5 minutes) no longer holds the faulty values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ancha.checks.state import evaluate_state
from ancha.scene.loading import load_scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest
from ancha.world.registry import catalog

SCENE = """\
name: fault-timeline
clock: { start: 2026-03-02T09:00:00Z, limit: 3h }
world:
  slack:
    channels: [{ ref: slack_incidents, name: incidents, members: [$slack_bot] }]
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders p99, query: "avg(last_5m):avg:orders.latency.p99{*} > 2000" }
    metrics:
      orders.latency.p99: { baseline: 120 }
  pagerduty:
    users:
      - { ref: pd_ana, name: Ana, email: ana@acme.test }
      - { ref: pd_ben, name: Ben, email: ben@acme.test }
    escalation_policies:
      - { ref: pd_policy, name: orders, rules: [{ delay: 5m, targets: [$pd_ana] }, { delay: 5m, targets: [$pd_ben] }] }
    services:
      - { ref: pd_orders, name: orders, escalation_policy: $pd_policy }
world_rules:
  faults:
    - ref: orders_latency
      starts: 10m
      effects:
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
        - datadog.metric: { name: orders.latency.p99, value: 2300 }
        - pagerduty.trigger: { service: $pd_orders, title: orders p99 above 2s }
      resolved_when: { message: { in: $slack_incidents, text_contains: [rolled back] } }
checks:
  - { id: fixed, state: { fault_resolved: $orders_latency } }
  - { id: monitor_ok, state: { datadog.monitor: $datadog_orders, is: OK } }
"""
MINUTE = 60.0


def world(tmp_path: Path) -> Environment:
    (tmp_path / "scene.yaml").write_text(SCENE)
    return Environment("env_timeline", load_scene(tmp_path / "scene.yaml", catalog()), 1)


def at(env: Environment, minutes: float) -> None:
    env.clock.advance_to(env.clock.start + minutes * MINUTE)
    env.timekeeper.run_due()


def state(env: Environment, body: dict[str, Any]) -> Any:
    return evaluate_state(body, env)


def feed(env: Environment) -> list[tuple[str, str]]:
    return [(event["service"], event["type"]) for event in env.feed.events]


def incidents(env: Environment) -> list[dict[str, Any]]:
    snapshot = env.tools["pagerduty"].snapshot()
    return list(snapshot["incidents"])


def test_fault__alerts_pages_escalates_and_recovers_on_the_simulated_clock(tmp_path: Path) -> None:
    env = world(tmp_path)
    monitor_ok = {"datadog.monitor": {"monitor": "datadog_orders", "is": "OK"}}
    fixed = {"fault_resolved": {"fault": "orders_latency"}}
    at(env, 9)
    assert state(env, monitor_ok).passed and incidents(env) == [] and feed(env) == []

    at(env, 10)
    assert not state(env, monitor_ok).passed
    (incident,) = incidents(env)
    assert incident["status"] == "triggered"
    assert ("datadog", "monitor.alert") in feed(env) and ("pagerduty", "incident.triggered") in feed(env)
    ana, ben = env.refs["pd_ana"].id, env.refs["pd_ben"].id
    assert [a["assignee"]["id"] for a in incident["assignments"]] == [ana]

    at(env, 15.5)  # nobody acknowledged within the first rule's 5 minutes
    (incident,) = incidents(env)
    assert [a["assignee"]["id"] for a in incident["assignments"]] == [ben]
    assert ("pagerduty", "incident.escalated") in feed(env)
    assert not state(env, fixed).passed and "still active" in state(env, fixed).explanation

    token = env.tools["slack"].credentials()["token"]
    env.dispatch("slack", ToolRequest("POST", "/api/chat.postMessage", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json"},
        body=b'{"channel": "%s", "text": "rolled back to the good build"}' % env.refs["slack_incidents"].id.encode()))
    assert state(env, fixed).passed
    assert not state(env, monitor_ok).passed  # its 5-minute window still holds 2300s

    at(env, 21.5)
    assert state(env, monitor_ok).passed
    assert feed(env)[-1] == ("datadog", "monitor.recovered")
    assert incidents(env)[0]["status"] == "triggered"  # resolving the fault does not close the page
