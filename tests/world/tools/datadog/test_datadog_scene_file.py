"""world.datadog in a scene file: refs of every kind, times, logs_file (and the scene hash),
check, action and effect bodies, and problems reported with path and hint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ancha.scene import SceneInvalid, load_scene
from ancha.world.registry import catalog
from ancha.world.tools.datadog.scene_file import DatadogFile

GOOD = """\
name: dd
clock: { start: 2026-03-02T09:00:00Z }
world:
  datadog:
    monitors:
      - { ref: datadog_orders, name: orders p99, type: query alert, priority: 1,
          query: "avg(last_5m):avg:orders.latency.p99{*} > 2000", tags: [service:orders] }
    downtimes: [{ monitor: $datadog_orders, start: -5m, end: 10m }, { monitor_tags: ["*"] }]
    dashboards: [{ ref: datadog_board, title: Orders }]
    events: [{ ref: datadog_deploy, title: Deployed, at: -1h }]
    logs: [{ ref: datadog_log, service: orders, status: error, message: boom, at: -2m, attributes: { a: 1 } }]
    logs_file: history.jsonl
    metrics:
      orders.latency.p99: { baseline: 120, noise: 5 }
      payments.errors: { points: [[-10m, 1], [-5m, 3]] }
world_rules:
  faults:
    - ref: slow
      starts: 0s
      effects:
        - datadog.monitor: { monitor: $datadog_orders, state: Alert }
        - datadog.metric: { name: orders.latency.p99, value: 2300 }
        - datadog.log: { service: orders, status: error, message: upstream timeout, every: 1m }
      resolved_when: { called: "POST /api/v1/events" }
  events:
    - at: 10m
      do:
        - datadog.monitor: { monitor: $datadog_orders, state: OK }
        - datadog.event: { title: Rollback, text: done, tags: [a:b] }
        - datadog.log: { service: orders, message: hello }
checks:
  - id: monitor_ok
    state: { datadog.monitor: $datadog_orders, is: OK }
  - id: muted_briefly
    state: { datadog.downtime: { monitor: $datadog_orders, remaining_gte: 1m, duration_lte: 10m } }
"""
START = 1772442000.0


def _write(tmp_path: Path, text: str, lines: list[str] | None = None) -> Path:
    (tmp_path / "scene.yaml").write_text(text)
    (tmp_path / "history.jsonl").write_text("\n".join(lines if lines is not None else [
        json.dumps({"ref": "datadog_file_log", "service": "web", "message": "from file", "at": "2026-03-02T08:00:00Z",
                    "attributes": {"http": {"status_code": 500}}}),
        json.dumps({"service": "web", "status": "warn", "message": "offset", "at": "-30m", "host": "web-1"}),
    ]) + "\n")
    return tmp_path / "scene.yaml"


def test_datadog_seed__refs_times_logs_file_and_bodies(tmp_path: Path) -> None:
    scene = load_scene(_write(tmp_path, GOOD), catalog())
    seed = scene.seed("datadog", DatadogFile)
    assert seed is not None
    assert seed.downtimes[0].monitor == "datadog_orders" and seed.downtimes[0].start == START - 300
    assert seed.downtimes[1].monitor_tags == ["*"] and seed.downtimes[1].monitor is None
    assert seed.events[0].at == START - 3600
    assert [log["message"] for log in seed.logs] == ["boom", "from file", "offset"]
    assert seed.logs[1]["at"] == START - 3600 and seed.logs[2]["at"] == START - 1800
    assert seed.metrics["payments.errors"].points == [(START - 600, 1.0), (START - 300, 3.0)]
    checks = {c.id: c.state for c in scene.checks}
    assert checks["monitor_ok"] == {"datadog.monitor": {"monitor": "datadog_orders", "is": "OK"}}
    assert checks["muted_briefly"] == {"datadog.downtime": {"monitor": "datadog_orders", "remaining_gte": 60.0,
                                                            "duration_lte": 600.0, "reject_active_unsafe": False}}


def test_logs_file__its_bytes_change_the_scene_hash(tmp_path: Path) -> None:
    first = load_scene(_write(tmp_path, GOOD), catalog()).source_hash
    (tmp_path / "history.jsonl").write_text(json.dumps({"service": "web", "message": "other"}) + "\n")
    assert load_scene(tmp_path / "scene.yaml", catalog()).source_hash != first


def _problems(tmp_path: Path, text: str, lines: list[str] | None = None) -> list[tuple[str | None, str, str]]:
    with pytest.raises(SceneInvalid) as info:
        load_scene(_write(tmp_path, text, lines), catalog())
    return [(p.file and Path(p.file).name, p.path, p.message) for p in info.value.problems]


def test_problems__unknown_keys_bad_values_and_refs_with_paths(tmp_path: Path) -> None:
    text = """\
world:
  datadog:
    monitors:
      - { ref: m, name: x, query: "avg(last_5m):avg:a{*} > 1", state: Broken, colour: red }
    downtimes: [{ monitor: $nope }, { start: 1m }]
    metrics: { a: { baseline: 1, points: [[0s, 1]] }, b: { points: [[soon, 1]] } }
checks:
  - { id: c, state: { datadog.monitor: $m } }
"""
    found = _problems(tmp_path, text)
    paths = [(path, message) for _, path, message in found]
    assert ("world.datadog.monitors[0].state", "expected one of 'OK', 'Warn', 'Alert', 'No Data', got 'Broken'") \
        in paths or any(p == "world.datadog.monitors[0].state" for p, _ in paths)
    assert any(p == "world.datadog.monitors[0].colour" for p, _ in paths)


def test_problems__downtimes_metrics_and_checks(tmp_path: Path) -> None:
    text = """\
world:
  datadog:
    monitors: [{ ref: m, name: x, query: "avg(last_5m):avg:a{*} > 1" }]
    downtimes: [{ monitor: $nope }, { start: 1m }]
    metrics: { a: { baseline: 1, points: [[0s, 1]] }, b: { points: [[soon, 1]] } }
checks:
  - { id: c, state: { datadog.monitor: $m } }
  - { id: d, state: { datadog.downtime: { monitor: $m, remaining_gte: forever } } }
"""
    found = {(path, message) for _, path, message in _problems(tmp_path, text)}
    assert any(p == "world.datadog.downtimes[0].monitor" and m.startswith("unknown ref $nope") for p, m in found)
    assert ("world.datadog.downtimes[1]", "a downtime targets either one monitor or monitor_tags") in found
    assert ("world.datadog.metrics.a", "a metric has either points or a baseline") in found
    assert any(p == "world.datadog.metrics.b.points[0][0]" for p, _ in found)
    assert ("checks[0].state", "datadog.monitor needs is: OK or is: Alert beside it") in found
    assert any(p.startswith("checks[1].state.datadog.downtime.remaining_gte") for p, _ in found)


def test_logs_file__each_bad_line_named_by_file_and_line(tmp_path: Path) -> None:
    lines = ['{"service": "a", "message": "ok"}', "not json", '{"service": "a"}', '{"service": "a", "message": "x", '
             '"status": "loud"}', '{"service": "a", "message": "x", "colour": 1}', '{"service": "a", "message": "x", '
             '"at": "whenever"}']
    text = "world:\n  datadog:\n    logs_file: history.jsonl\n"
    found = _problems(tmp_path, text, lines)
    assert [(f, p) for f, p, _ in found] == [("history.jsonl", ""), ("history.jsonl", "message"),
                                            ("history.jsonl", "status"), ("history.jsonl", "colour"),
                                            ("history.jsonl", "at")]
    missing = _problems(tmp_path, "world:\n  datadog:\n    logs_file: none.jsonl\n", lines)
    assert missing[0][1] == "world.datadog.logs_file" and missing[0][2].startswith("no such file")


def test_actions_and_effects__bad_bodies_reported(tmp_path: Path) -> None:
    text = """\
world:
  datadog:
    monitors: [{ ref: m, name: x, query: "avg(last_5m):avg:a{*} > 1" }]
world_rules:
  faults:
    - ref: f
      starts: 0s
      effects:
        - datadog.monitor: { monitor: $m, state: OK }
        - datadog.log: { service: a, message: b, every: 100ms }
      resolved_when: { called: "*" }
  events:
    - at: 1m
      do:
        - datadog.monitor: { monitor: $nope, state: Alert }
        - datadog.event: { text: no title }
"""
    found = {(path, message) for _, path, message in _problems(tmp_path, text)}
    paths = {p for p, _ in found}
    assert "world_rules.faults[0].effects[0].datadog.monitor.state" in paths
    assert "world_rules.faults[0].effects[1].datadog.log.every" in paths
    assert any(p == "world_rules.events[0].do[0].datadog.monitor.monitor" for p in paths)
    assert "world_rules.events[0].do[1].datadog.event.title" in paths
