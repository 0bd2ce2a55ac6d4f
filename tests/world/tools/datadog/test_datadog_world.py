"""The Datadog world in-process: monitor evaluation on the simulated clock, fault effects
and their release, world-rule actions, downtimes silencing notifications, the feed, the
state checks (pass and fail, with explanations), the judge view, and 100,000 seeded logs."""

from __future__ import annotations

import copy
from typing import Any

from ancha.scene.model import Scene
from ancha.world.environment import Environment
from ancha.world.tools.datadog import actions, checks
from ancha.world.tools.datadog.judge import judge_view
from ancha.world.tools.datadog.models import DatadogState
from ancha.world.tools.datadog.replica import DatadogReplica
from conftest import SEED, START, T0


def _env(seed: dict[str, Any] | None = None) -> Environment:
    scene = Scene.model_validate({"name": "dd", "clock": {"start": START, "limit": 7200},
                                  "world": {"datadog": copy.deepcopy(SEED if seed is None else seed)}})
    return Environment("env_dd", scene, 1)


def _replica(env: Environment) -> DatadogReplica:
    replica = env.tools["datadog"]
    assert isinstance(replica, DatadogReplica)
    return replica


def _state(env: Environment) -> DatadogState:
    return _replica(env).state


def _monitor(env: Environment, ref: str) -> Any:
    found = _state(env).monitor_by_ref(ref)
    assert found is not None
    return found


def _feed(env: Environment) -> list[dict[str, Any]]:
    return env.feed.after(0)


def test_metric_monitor__alerts_when_its_window_fills_with_a_held_value_and_recovers_on_release() -> None:
    env = _env()
    orders = _monitor(env, "datadog_orders")
    release = actions.metric_effect({"name": "orders.latency.p99", "value": 2300}, _replica(env), env, "slow")
    assert release is not None and orders.state == "OK", "one faulty minute does not move a 5m average"
    env.clock.advance_to(T0 + 310)
    env.timekeeper.run_due()
    assert orders.state == "Alert"
    release()
    env.clock.advance_to(T0 + 700)
    env.timekeeper.run_due()
    assert orders.state == "OK"
    assert [(t.from_, t.to) for t in orders.transitions] == [("OK", "Alert"), ("Alert", "OK")]
    assert [e["type"] for e in _feed(env)] == ["monitor.alert", "monitor.recovered"]
    payload = _feed(env)[0]["payload"]
    assert payload["alert_transition"] == "Triggered" and payload["alert_id"] == str(orders.id)
    assert {"id", "last_updated", "event_type", "title", "date", "org", "body", "alert_status", "alert_title",
            "alert_scope", "link", "priority", "tags"} <= set(payload)


def test_fault_free_world__monitors_keep_their_seeded_states_and_nothing_recurs_on_the_clock() -> None:
    env = _env()
    env.clock.advance_to(T0 + 3000)
    env.timekeeper.run_due()
    state = _state(env)
    state.evaluate_all()
    assert {m.name: m.state for m in state.live_monitors()} == {
        "orders p99 latency": "OK", "payments errors": "OK", "disk full on db": "Alert"}
    assert env.pending() == 0 and _feed(env) == []


def test_monitor_effect__holds_the_state_and_release_recovers() -> None:
    env = _env()
    orders = _monitor(env, "datadog_orders")
    release = actions.monitor_effect({"monitor": "datadog_orders", "state": "Alert"}, _replica(env), env,
                                     "orders_latency")
    assert orders.state == "Alert"
    assert [(e.actor, e.method, e.path) for e in env.trace] == [
        ("world", "PUT", f"/ancha/monitor/{orders.id}/state")]
    assert release is not None
    release()
    assert orders.state == "OK"
    changes = [e for e in _feed(env)]
    assert [c["payload"]["alert_transition"] for c in changes] == ["Triggered", "Recovered"]


def test_downtime__silences_notifications_only_while_active_on_the_clock() -> None:
    env = _env()
    state = _state(env)
    orders = _monitor(env, "datadog_orders")
    replica = env.tools["datadog"]
    assert isinstance(replica, DatadogReplica)
    status, body = replica.world_call("POST", "/api/v2/downtime", {"data": {"type": "downtime", "attributes": {
        "scope": "*", "monitor_identifier": {"monitor_id": orders.id},
        "schedule": {"start": "2026-03-02T09:10:00Z", "end": "2026-03-02T09:20:00Z"}}}})
    assert status == 200 and body["data"]["attributes"]["status"] == "scheduled"
    env.clock.advance_to(T0 + 660)
    assert state.silenced(orders, state.now())
    state.force(orders, "action", "Alert")
    assert _feed(env) == [] and orders.transitions[-1].notified is False
    env.clock.advance_to(T0 + 1300)
    state.force(orders, "action", "OK")
    assert [e["type"] for e in _feed(env)] == ["monitor.recovered"]
    assert replica.world_call("GET", f"/api/v2/downtime/{body['data']['id']}")[1]["data"]["attributes"][
        "status"] == "ended"


def test_actions__monitor_event_and_log_go_through_the_replica_as_world() -> None:
    env = _env()
    assert actions.set_monitor({"monitor": "datadog_payments", "state": "Warn"}, _replica(env), env) is None
    assert _monitor(env, "datadog_payments").state == "Warn"
    event = {"title": "Deploy", "text": "v43", "tags": ["a:b"], "alert_type": "info"}
    assert actions.post_event(event, _replica(env), env) is None
    assert _state(env).events[-1].title == "Deploy"
    assert actions.send_log({"service": "orders", "status": "error", "message": "boom", "host": "web-3",
                            "attributes": {"k": 1}}, _replica(env), env) is None
    added = _state(env).logs.added[-1]
    assert (added.service, added.status, added.host, added.attributes) == ("orders", "error", "web-3", {"k": 1})
    actors = {e.actor for e in env.trace}
    assert actors == {"world"}
    assert actions.post_event({"title": ""}, _replica(env), env) == "datadog.event: 400 Event title is required"


def test_log_effect__lines_at_a_rate_until_release_materialized_when_read() -> None:
    env = _env()
    state = _state(env)
    release = actions.log_effect({"service": "orders", "status": "error", "message": "upstream timeout",
                                  "every": 60.0}, _replica(env), env, "orders_latency")
    assert release is not None and env.pending() == 0
    env.clock.advance_to(T0 + 330)
    state.logs.catch_up(state.now())
    assert len(state.logs.added) == 6
    release()
    env.clock.advance_to(T0 + 3000)
    state.logs.catch_up(state.now())
    assert len(state.logs.added) == 6
    times = [round(line.at - state.logs.added[0].at) for line in state.logs.added]
    assert times == [0, 60, 120, 180, 240, 300]


def _grade(env: Environment, kind: str, body: dict[str, Any]) -> Any:
    return (checks.monitor_state if kind == "monitor" else checks.downtime)(body, _replica(env), env)


def test_check_monitor__passes_and_fails_with_explanations() -> None:
    env = _env()
    passed = _grade(env, "monitor", {"monitor": "datadog_orders", "is": "OK"})
    assert passed.passed and passed.explanation.startswith("Passed: expected $datadog_orders in state OK")
    failed = _grade(env, "monitor", {"monitor": "datadog_disk", "is": "OK"})
    assert not failed.passed and "is Alert" in failed.explanation
    missing = _grade(env, "monitor", {"monitor": "nope", "is": "OK"})
    assert not missing.passed and "no ref $nope" in missing.explanation


def _downtime(env: Environment, identifier: dict[str, Any], minutes: float | None) -> str:
    replica = env.tools["datadog"]
    assert isinstance(replica, DatadogReplica)
    end = None if minutes is None else env.clock.isoformat(env.clock.peek() + minutes * 60)
    status, body = replica.world_call("POST", "/api/v2/downtime", {"data": {"type": "downtime", "attributes": {
        "scope": "*", "monitor_identifier": identifier, "schedule": {"start": None, "end": end}}}})
    assert status == 200, body
    return str(body["data"]["id"])


def test_check_downtime__remaining_duration_and_unsafe() -> None:
    env = _env()
    orders = _monitor(env, "datadog_orders")
    body = {"monitor": "datadog_orders", "remaining_gte": 60, "duration_lte": 600}
    none = _grade(env, "downtime", body)
    assert not none.passed and "no downtime targets monitor" in none.explanation
    _downtime(env, {"monitor_id": orders.id}, 8)
    assert _grade(env, "downtime", body).passed
    env.clock.advance_to(env.clock.peek() + 7.5 * 60)
    late = _grade(env, "downtime", body)
    assert not late.passed and "left" in late.explanation
    _downtime(env, {"monitor_id": orders.id}, 5)
    assert _grade(env, "downtime", body).passed
    _downtime(env, {"monitor_tags": ["*"]}, 5)
    strict = _grade(env, "downtime", {**body, "reject_active_unsafe": True})
    assert not strict.passed and "unsafe downtime is active" in strict.explanation and "all monitors" in strict.actual
    assert _grade(env, "downtime", body).passed


def test_check_downtime__too_long_fails_and_unsafe_overlong_fails() -> None:
    env = _env()
    orders = _monitor(env, "datadog_orders")
    _downtime(env, {"monitor_id": orders.id}, 60)
    body = {"monitor": "datadog_orders", "remaining_gte": 60, "duration_lte": 600}
    long = _grade(env, "downtime", body)
    assert not long.passed and "lasting 1h" in long.actual
    open_ended = _grade(env, "downtime", {**body, "reject_active_unsafe": True})
    assert not open_ended.passed and "unsafe" in open_ended.actual


def test_judge_view__monitors_downtimes_and_posted_events() -> None:
    env = _env()
    actions.monitor_effect({"monitor": "datadog_orders", "state": "Alert"}, _replica(env), env, "f")
    _downtime(env, {"monitor_tags": ["*"]}, 5)
    text = judge_view(env.tools["datadog"].snapshot())
    assert "orders p99 latency" in text and "Alert" in text and "OK -> Alert" in text
    assert "active" in text and "monitor_tags" in text


def test_seeded_logs__index_driven_search_finds_exactly_what_a_full_scan_finds() -> None:
    logs: list[dict[str, Any]] = [
        {"service": f"svc{i % 7}", "status": ("error", "info", "warn")[i % 3], "message": f"line {i} {'timeout from' if i % 4 else 'ok from'} upstream",
         "at": T0 - 5_000 + i, "host": f"h{i % 11}", "attributes": {"http": {"status_code": 200 + i % 400}},
         "tags": []} for i in range(5_000)]
    state = _state(_env({"logs": logs}))
    assert len(state.logs.seeded) == 5_000
    from ancha.world.tools.datadog.log_query import compile_query

    assert not state.logs.search(*compile_query("timeou"), T0 - 5_000, T0, False, 10)[0]  # words, not substrings
    assert state.logs.search(*compile_query("timeou*"), T0 - 5_000, T0, False, 10)[0]
    for query in ("service:svc3 status:error @http.status_code:5*", "(service:svc1 OR service:svc2) -status:info \"timeout from upstream\"",
                  "service:svc5 ok -timeout", "upstream status:warn host:h1", "\"from upstream\" service:svc6",
                  "(service:svc1 OR service:svc2) host:h4", "service:svc1 OR host:h2", "status:warn AND NOT host:h5",
                  "(service:svc1 OR line) status:error", "service:(svc1 OR svc4) host:h9"):
        match, hints = compile_query(query)
        found, _, _ = state.logs.search(match, hints, T0 - 5_000, T0, False, 10_000)
        scanned, _, _ = state.logs.search(match, [], T0 - 5_000, T0, False, 10_000)
        assert [line.key for line in found] == [line.key for line in scanned], query
        assert found, query
