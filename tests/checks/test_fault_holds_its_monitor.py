"""A fault holds its effects until it is resolved: a world event that sets the fault's
monitor to OK meanwhile does not win (no ``monitor.recovered`` in the feed), and the
monitor recovers only when ``resolved_when`` holds. The monitor check then cites the
world's call that released the fault's state."""

from __future__ import annotations

import json
from pathlib import Path

from ancha.checks.state import evaluate_state
from ancha.scene.loading import load_scene
from ancha.world.environment import Environment
from ancha.world.kernel.tool import ToolRequest
from ancha.world.registry import catalog

SCENE = """\
name: fault-holds
clock: { start: 2026-03-02T09:00:00Z, limit: 3h }
world:
  slack:
    channels: [{ ref: slack_incidents, name: incidents, members: [$slack_bot] }]
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders health, type: "service check",
          query: '"orders.can_connect".over("*").by("host").last(2).count_by_status()' }
world_rules:
  faults:
    - ref: orders_down
      starts: 0s
      effects:
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
      resolved_when: { message: { in: $slack_incidents, text_contains: [rolled back] } }
  events:
    - at: 5m
      do:
        - datadog.monitor: { monitor: $datadog_orders, state: OK }
"""
MINUTE = 60.0
ALERT = {"datadog.monitor": {"monitor": "datadog_orders", "is": "Alert"}}
OK = {"datadog.monitor": {"monitor": "datadog_orders", "is": "OK"}}


def _world(tmp_path: Path) -> Environment:
    (tmp_path / "scene.yaml").write_text(SCENE)
    return Environment("env_fault_holds", load_scene(tmp_path / "scene.yaml", catalog()), 1)


def _at(env: Environment, minutes: float) -> None:
    env.clock.advance_to(env.clock.start + minutes * MINUTE)
    env.timekeeper.run_due()


def _datadog_feed(env: Environment) -> list[str]:
    return [event["type"] for event in env.feed.events if event["service"] == "datadog"]


def test_fault__a_world_event_setting_its_monitor_ok_does_not_win_while_it_is_active(tmp_path: Path) -> None:
    env = _world(tmp_path)
    _at(env, 1)
    assert evaluate_state(ALERT, env).passed
    _at(env, 6)  # the world event set the monitor to OK at 5m: the active fault still holds it in Alert
    assert evaluate_state(ALERT, env).passed, evaluate_state(ALERT, env).actual
    assert "monitor.recovered" not in _datadog_feed(env)

    token = env.tools["slack"].credentials()["token"]
    channel = env.refs["slack_incidents"].id
    env.dispatch(
        "slack",
        ToolRequest(
            "POST",
            "/api/chat.postMessage",
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
            body=json.dumps({"channel": channel, "text": "rolled back to the good build"}).encode(),
        ),
    )
    recovered = evaluate_state(OK, env)  # resolved: the fault lets go, and the world event's OK holds
    assert recovered.passed, recovered.actual
    assert _datadog_feed(env)[-1] == "monitor.recovered"
    released = [
        e.seq for e in env.trace if e.actor == "world" and e.method == "DELETE" and "/monitor/" in e.path
    ]
    assert recovered.evidence == released and len(released) == 1
