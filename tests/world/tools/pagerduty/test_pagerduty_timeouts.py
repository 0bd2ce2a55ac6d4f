"""Time on the world's clock, through the official clients on an in-process environment:
seeded open incidents page and escalate like new ones, and the services'
acknowledgement timeout and auto-resolve act with the log entries PagerDuty writes."""

from __future__ import annotations

import copy
from typing import Any

from pagerduty_support import SEED, advance, build_env, in_process_clients

from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent


def _seed(**service: Any) -> dict[str, Any]:
    seed = copy.deepcopy(SEED)
    for item in seed["services"]:
        item.update(service)
    return seed


def _assignees(incident: dict[str, Any]) -> list[str]:
    return [a["assignee"]["summary"] for a in incident["assignments"]]


def _log(client: Any, incident_id: str) -> list[dict[str, Any]]:
    return list(reversed(client.list_all(f"incidents/{incident_id}/log_entries")))  # oldest first


def _paged(env: Environment) -> list[DomainEvent]:
    seen: list[DomainEvent] = []
    env.bus.subscribe("notification_sent", seen.append)
    return seen


def test_seeded_triggered_incident__pages_at_the_start_and_escalates_on_the_world_clock() -> None:
    env = build_env()
    client, _ = in_process_clients(env)
    paged = _paged(env)
    seeded = env.refs["pd_open"].id
    advance(env, 0)
    assert [e.data["notified"] for e in paged] == [env.refs["pd_ben"].id]
    advance(env, 601)  # the first rule's delay (10m), counted from clock.start
    incident = client.rget(f"incidents/{seeded}")
    assert _assignees(incident) == ["Mike Chen"]
    kinds = [e["type"] for e in _log(client, seeded)]
    assert kinds == ["trigger_log_entry", "notify_log_entry", "escalate_log_entry", "notify_log_entry"]


def test_seeded_incidents__acknowledged_or_resolved_ones_page_nobody() -> None:
    seed = copy.deepcopy(SEED)
    seed["incidents"][1]["status"] = "acknowledged"
    env = build_env(seed)
    paged = _paged(env)
    advance(env, 3600)
    assert paged == []


def test_acknowledgement_timeout__acknowledged_incident_is_triggered_again_and_pages_afresh() -> None:
    env = build_env(_seed(acknowledgement_timeout=1800.0))
    client, session = in_process_clients(env)
    service = client.rget(f"services/{env.refs['pagerduty_orders'].id}")
    assert service["acknowledgement_timeout"] == 1800 and service["auto_resolve_timeout"] is None
    created = session.rpost(
        "incidents",
        json={
            "type": "incident",
            "title": "Orders down",
            "service": {"id": service["id"], "type": "service_reference"},
        },
    )
    advance(env, 60)
    acked = client.rput(
        f"incidents/{created['id']}", json={"type": "incident_reference", "status": "acknowledged"}
    )
    assert acked["status"] == "acknowledged"
    ack_entry = next(e for e in _log(client, created["id"]) if e["type"] == "acknowledge_log_entry")
    assert ack_entry["acknowledgement_timeout"] == 1800
    paged = _paged(env)
    advance(env, 1799)
    assert client.rget(f"incidents/{created['id']}")["status"] == "acknowledged"
    advance(env, 1)
    again = client.rget(f"incidents/{created['id']}")
    assert again["status"] == "triggered" and _assignees(again) == ["Ben Okafor"]
    entry = next(e for e in _log(client, created["id"]) if e["type"] == "unacknowledge_log_entry")
    assert entry["channel"] == {"type": "timeout"}
    assert [e.data["notified"] for e in paged if e.data["incident"] == created["id"]] == [
        env.refs["pd_ben"].id
    ]


def test_acknowledgement_timeout__acknowledging_again_restarts_it_and_resolving_ends_it() -> None:
    env = build_env(_seed(acknowledgement_timeout=1800.0))
    client, _ = in_process_clients(env)
    incident_id = env.refs["pd_open"].id
    ack = {"type": "incident_reference", "status": "acknowledged"}
    client.rput(f"incidents/{incident_id}", json=ack)
    advance(env, 1200)
    client.rput(f"incidents/{incident_id}", json=ack)
    advance(env, 1200)  # 40m after the first acknowledgement, 20m after the second
    assert client.rget(f"incidents/{incident_id}")["status"] == "acknowledged"
    client.rput(f"incidents/{incident_id}", json={"type": "incident_reference", "status": "resolved"})
    advance(env, 7200)
    assert client.rget(f"incidents/{incident_id}")["status"] == "resolved"


def test_auto_resolve__an_open_incident_resolves_after_the_service_timeout() -> None:
    env = build_env(_seed(auto_resolve_timeout=14400.0))
    client, _ = in_process_clients(env)
    events = client.rget(f"services/{env.refs['pagerduty_orders'].id}")
    assert events["auto_resolve_timeout"] == 14400
    created = client.rpost(
        "incidents",
        json={
            "type": "incident",
            "title": "Orders down",
            "service": {"id": events["id"], "type": "service_reference"},
        },
    )
    advance(env, 14399)
    assert client.rget(f"incidents/{created['id']}")["status"] == "triggered"
    advance(env, 1)
    resolved = client.rget(f"incidents/{created['id']}")
    assert resolved["status"] == "resolved" and resolved["resolved_at"] == "2026-03-02T13:00:00Z"
    entry = _log(client, created["id"])[-1]
    assert entry["type"] == "resolve_log_entry" and entry["channel"] == {"type": "timeout"}
    # The seeded open incident's timer ran from clock.start too.
    assert client.rget(f"incidents/{env.refs['pd_open'].id}")["status"] == "resolved"
