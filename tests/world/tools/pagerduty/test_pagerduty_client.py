"""The official ``pagerduty`` client against the replica on the real server."""

from __future__ import annotations

from typing import Any

import pagerduty
import pytest
from pagerduty_support import PD, rest_client, routing_key


def test_list_incidents__the_official_client_pages_through_them(pd: PD) -> None:
    incidents = list(pd.client.iter_all("incidents", params={"date_range": "all"}))
    assert [i["title"] for i in incidents] == ["Disk full on db-1", "Invoices delayed"]
    assert incidents[1]["assignments"][0]["assignee"]["summary"] == "Ben Okafor"


def test_list_incidents__default_window_is_the_last_month_and_statuses_filter(pd: PD) -> None:
    open_ones = pd.client.list_all("incidents", params={"statuses[]": ["triggered", "acknowledged"]})
    assert [i["title"] for i in open_ones] == ["Invoices delayed"]


def test_create_incident__pages_the_policy_and_shows_in_reads(pd: PD) -> None:
    created = pd.client.rpost("incidents", json={"type": "incident", "title": "Orders p99 above 2s",
                                                 "service": {"id": pd.ref("pagerduty_orders"),
                                                             "type": "service_reference"}})
    assert created["status"] == "triggered"
    # The rotation started a week before clock.start with Laura: it is Ben's week now.
    assert [a["assignee"]["summary"] for a in created["assignments"]] == ["Ben Okafor"]
    fetched = pd.client.rget(f"incidents/{created['id']}")
    assert fetched["title"] == "Orders p99 above 2s"
    kinds = [e["type"] for e in pd.client.list_all(f"incidents/{created['id']}/log_entries")]
    assert set(kinds) >= {"trigger_log_entry", "assign_log_entry", "notify_log_entry"}


def test_update_incident__acknowledge_then_resolve(pd: PD) -> None:
    incident_id = pd.ref("pd_open")
    acked = pd.client.rput(f"incidents/{incident_id}", json={"type": "incident_reference",
                                                               "status": "acknowledged"})
    assert acked["status"] == "acknowledged"
    resolved = pd.client.rput(f"incidents/{incident_id}", json={"type": "incident_reference",
                                                                  "status": "resolved"})
    assert resolved["status"] == "resolved" and resolved["resolved_at"]


def test_write_without_from__is_refused_with_pagerduty_2016(pd: PD) -> None:
    client = rest_client(pd.url, pd.token, None)
    with pytest.raises(pagerduty.HttpError) as raised:
        client.rput(f"incidents/{pd.ref('pd_open')}", json={"type": "incident_reference", "status": "resolved"})
    assert raised.value.response.status_code == 400
    assert raised.value.response.json()["error"]["code"] == 2016


def test_bad_token__gets_pagerduty_401(pd: PD) -> None:
    answer = pd.raw("GET", "/incidents", token="u+nottherealtoken123")
    assert answer.status_code == 401
    assert answer.json() == {"error": {"message": "Authentication failed", "code": 2006}}


def test_notes__add_and_list(pd: PD) -> None:
    incident_id = pd.ref("pd_open")
    note = pd.client.rpost(f"incidents/{incident_id}/notes", json={"content": "Looking at the queue"})
    assert note["content"] == "Looking at the queue"
    notes = pd.client.rget(f"incidents/{incident_id}/notes")
    assert [n["content"] for n in notes] == ["Looking at the queue"]


def test_directory_reads__users_services_policies_schedules_priorities(pd: PD) -> None:
    assert {u["email"] for u in pd.client.list_all("users")} >= {"laura@acme.test", "ancha-agent@acme.test"}
    assert pd.client.rget("users/me")["email"] == "ancha-agent@acme.test"
    services = pd.client.list_all("services")
    assert [s["name"] for s in services] == ["Billing", "Orders API"]
    assert services[0]["status"] == "critical"
    policy = pd.client.rget(f"escalation_policies/{pd.ref('pd_orders_policy')}")
    assert [r["escalation_delay_in_minutes"] for r in policy["escalation_rules"]] == [10, 15]
    schedule = pd.client.rget(f"schedules/{pd.ref('pd_primary')}")
    assert schedule["schedule_layers"][0]["rotation_turn_length_seconds"] == 604800
    assert [p["name"] for p in pd.client.list_all("priorities")] == ["P1", "P2", "P3", "P4", "P5"]


def test_oncalls__follow_the_rotation_on_the_simulated_clock(pd: PD) -> None:
    oncalls: list[dict[str, Any]] = pd.client.list_all("oncalls")
    by_level = {(o["escalation_level"], o["user"]["summary"]) for o in oncalls}
    # The layer started 2026-02-23 09:00 with Laura; a week later (clock.start) it is Ben's turn.
    assert (1, "Ben Okafor") in by_level and (2, "Mike Chen") in by_level


def test_events_api__trigger_dedup_acknowledge_resolve(pd: PD) -> None:
    events = pd.events()
    key = events.trigger("Orders 5xx above 5%", "orders-api", dedup_key="orders-5xx")
    assert key == "orders-5xx"
    assert events.trigger("Orders 5xx above 5%", "orders-api", dedup_key="orders-5xx") == "orders-5xx"
    found = pd.client.list_all("incidents", params={"incident_key": "orders-5xx"})
    assert len(found) == 1 and found[0]["status"] == "triggered"
    events.acknowledge("orders-5xx")
    assert pd.client.rget(f"incidents/{found[0]['id']}")["status"] == "acknowledged"
    events.resolve("orders-5xx")
    assert pd.client.rget(f"incidents/{found[0]['id']}")["status"] == "resolved"


def test_events_api__invalid_event_gets_the_events_api_400(pd: PD) -> None:
    answer = pd.raw("POST", "/v2/enqueue", token=None, json={
        "routing_key": routing_key(pd.env), "event_action": "trigger", "payload": {"summary": "x", "source": "y"}})
    assert answer.status_code == 400
    assert answer.json()["status"] == "invalid event"


def test_unimplemented_vendor_endpoint__501_and_unknown_path_404(pd: PD) -> None:
    gap = pd.raw("GET", "/vendors")
    assert gap.status_code == 501 and "GET /vendors" in gap.json()["error"]["errors"][0]
    missing = pd.raw("GET", "/no_such_thing")
    assert missing.status_code == 404 and missing.json() == {"error": {"message": "Not Found", "code": 2100}}
