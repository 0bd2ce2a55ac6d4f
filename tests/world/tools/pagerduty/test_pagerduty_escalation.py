"""Escalation on the simulated clock, on-call computation, webhooks and domain events,
driven in-process (no sleeps: ``advance`` runs what falls due)."""

from __future__ import annotations

import copy
import json
from typing import Any

from pagerduty_support import SEED, advance, build_env, call, routing_key

from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent


def _trigger(env: Environment, title: str = "Orders down") -> dict[str, Any]:
    service = env.refs["pagerduty_orders"].id
    answer = call(env, "POST", "/incidents", {"incident": {"type": "incident", "title": title,
                                                           "service": {"id": service, "type": "service_reference"}}})
    assert answer.status == 201, answer.body
    return dict(json.loads(answer.body)["incident"])


def _get(env: Environment, incident_id: str) -> dict[str, Any]:
    return dict(json.loads(call(env, "GET", f"/incidents/{incident_id}").body)["incident"])


def _assignees(incident: dict[str, Any]) -> list[str]:
    return [a["assignee"]["summary"] for a in incident["assignments"]]


def test_escalation__unacknowledged_incident_moves_to_the_next_rule_after_its_delay(env: Environment) -> None:
    incident = _trigger(env)
    assert _assignees(incident) == ["Ben Okafor"]
    advance(env, 599)
    assert _assignees(_get(env, incident["id"])) == ["Ben Okafor"]
    advance(env, 2)
    escalated = _get(env, incident["id"])
    assert _assignees(escalated) == ["Mike Chen"]
    kinds = [e["type"] for e in json.loads(call(env, "GET", f"/incidents/{incident['id']}/log_entries").body)
             ["log_entries"]]
    assert "escalate_log_entry" in kinds and kinds.count("notify_log_entry") == 2


def test_escalation__stops_at_the_last_rule_without_loops(env: Environment) -> None:
    incident = _trigger(env)
    advance(env, 600 + 900 + 3600)
    assert _assignees(_get(env, incident["id"])) == ["Mike Chen"]
    assert env.pending() == 0


def test_escalation__loops_num_loops_times() -> None:
    seed = copy.deepcopy(SEED)
    seed["escalation_policies"][0]["num_loops"] = 1
    env = build_env(seed)
    incident = _trigger(env)
    advance(env, 601)
    assert _assignees(_get(env, incident["id"])) == ["Mike Chen"]
    advance(env, 900)
    assert _assignees(_get(env, incident["id"])) == ["Ben Okafor"]
    advance(env, 600)
    assert _assignees(_get(env, incident["id"])) == ["Mike Chen"]
    assert env.pending() == 0


def test_escalation__acknowledging_cancels_it(env: Environment) -> None:
    incident = _trigger(env)
    advance(env, 300)
    answer = call(env, "PUT", f"/incidents/{incident['id']}", {"incident": {"type": "incident_reference",
                                                                           "status": "acknowledged"}})
    assert answer.status == 200
    advance(env, 3600)
    assert _assignees(_get(env, incident["id"])) == ["Ben Okafor"]
    assert env.pending() == 0


def test_escalation__schedule_target_pages_whoever_is_on_call_then(env: Environment) -> None:
    advance(env, 7 * 86400)  # next week: Laura's turn again
    assert _assignees(_trigger(env)) == ["Laura Diaz"]


def test_manual_escalation_and_reassignment(env: Environment) -> None:
    incident = _trigger(env)
    call(env, "PUT", f"/incidents/{incident['id']}", {"incident": {"type": "incident_reference",
                                                                  "escalation_level": 2}})
    assert _assignees(_get(env, incident["id"])) == ["Mike Chen"]
    laura = env.refs["pd_laura"].id
    call(env, "PUT", f"/incidents/{incident['id']}", {"incident": {
        "type": "incident_reference", "assignments": [{"assignee": {"id": laura, "type": "user_reference"}}]}})
    assert _assignees(_get(env, incident["id"])) == ["Laura Diaz"]


def test_snooze__returns_to_triggered_when_it_ends(env: Environment) -> None:
    incident = _trigger(env)
    answer = call(env, "POST", f"/incidents/{incident['id']}/snooze", {"duration": 1800})
    assert answer.status == 201 and json.loads(answer.body)["incident"]["status"] == "acknowledged"
    advance(env, 1801)
    assert _get(env, incident["id"])["status"] == "triggered"


def test_merge__resolves_the_sources(env: Environment) -> None:
    first, second = _trigger(env, "A"), _trigger(env, "B")
    answer = call(env, "PUT", f"/incidents/{first['id']}/merge",
                  {"source_incidents": [{"id": second["id"], "type": "incident_reference"}]})
    assert answer.status == 200
    assert _get(env, second["id"])["status"] == "resolved"


def test_bulk_update__resolves_many(env: Environment) -> None:
    ids = [_trigger(env, t)["id"] for t in ("A", "B")]
    answer = call(env, "PUT", "/incidents", {"incidents": [{"id": i, "type": "incident_reference",
                                                            "status": "resolved"} for i in ids]})
    assert answer.status == 200
    assert [i["status"] for i in json.loads(answer.body)["incidents"]] == ["resolved", "resolved"]


def test_domain_events_and_webhooks__escalation_reaches_the_feed_but_own_writes_do_not(env: Environment) -> None:
    seen: list[DomainEvent] = []
    env.bus.subscribe("*", lambda e: seen.append(e) if e.tool == "pagerduty" else None)
    incident = _trigger(env)
    assert env.feed.events == []  # the agent's own trigger is not delivered back
    advance(env, 601)
    types = [e.type for e in seen]
    assert types[:2] == ["incident_triggered", "notification_sent"] and "incident_escalated" in types
    mine = [e for e in env.feed.events if e["payload"]["event"]["data"]["id"] == incident["id"]]
    assert [e["type"] for e in mine] == ["incident.escalated"]  # (the seeded open incident escalates too)
    body = mine[0]["payload"]["event"]
    assert body["resource_type"] == "incident" and body["data"]["id"] == incident["id"]
    assert [a["summary"] for a in body["data"]["assignees"]] == ["Mike Chen"]


def test_events_api_trigger__by_a_monitor_delivers_incident_triggered_webhook(env: Environment) -> None:
    from ancha.world.kernel.tool import ToolRequest

    body = {"routing_key": routing_key(env), "event_action": "trigger",
            "payload": {"summary": "CPU high", "source": "web-1", "severity": "critical"}}
    raw = json.dumps(body).encode()
    answer = env.dispatch("pagerduty", ToolRequest("POST", "/v2/enqueue", body=raw))
    assert answer.status == 202 and json.loads(answer.body)["message"] == "Event processed"
    assert env.feed.events == []  # sent by the agent itself
    world = {"authorization": f"Token token={env.tools['pagerduty'].world_token}"}  # type: ignore[attr-defined]
    body["dedup_key"] = "cpu"
    answer = env.dispatch("pagerduty", ToolRequest("POST", "/v2/enqueue", headers=world, body=json.dumps(body).encode()))
    assert answer.actor == "world"
    assert [e["type"] for e in env.feed.events] == ["incident.triggered"]
    assert env.feed.events[0]["payload"]["event"]["agent"]["type"] == "service_reference"


def test_oncalls__range_lists_each_shift(env: Environment) -> None:
    answer = call(env, "GET", "/oncalls", query="since=2026-03-02T09:00:00Z&until=2026-03-16T09:00:00Z"
                  "&schedule_ids[]=" + env.refs["pd_primary"].id)
    shifts = [(o["user"]["summary"], o["start"], o["end"]) for o in json.loads(answer.body)["oncalls"]]
    assert shifts == [("Ben Okafor", "2026-03-02T09:00:00Z", "2026-03-09T09:00:00Z"),
                      ("Laura Diaz", "2026-03-09T09:00:00Z", "2026-03-16T09:00:00Z")]


def test_schedule_users__in_a_range(env: Environment) -> None:
    schedule = env.refs["pd_primary"].id
    answer = call(env, "GET", f"/schedules/{schedule}/users",
                  query="since=2026-03-03T00:00:00Z&until=2026-03-04T00:00:00Z")
    assert [u["name"] for u in json.loads(answer.body)["users"]] == ["Ben Okafor"]
