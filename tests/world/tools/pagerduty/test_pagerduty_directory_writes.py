"""Teams, schedule overrides and maintenance windows, through pdpyras and the official
``pagerduty`` client on an in-process world (its clock moved by ``advance``)."""

from __future__ import annotations

from typing import Any

import pagerduty
import pdpyras
import pytest
from pagerduty_support import advance, build_env, in_process_clients, routing_key

from ancha.world.environment import Environment
from ancha.world.kernel.bus import DomainEvent


@pytest.fixture
def world() -> tuple[Environment, pagerduty.RestApiV2Client, pdpyras.APISession]:
    env = build_env()
    client, session = in_process_clients(env)
    return env, client, session


def _answer(raised: pytest.ExceptionInfo[pagerduty.HttpError]) -> Any:
    response = raised.value.response
    assert response is not None
    return response


def _ref(env: Environment, name: str) -> str:
    return env.refs[name].id


def _reference(kind: str, id: str) -> dict[str, str]:
    return {"id": id, "type": f"{kind}_reference"}


# --- teams -------------------------------------------------------------------------------


def test_teams__crud_members_and_policies_and_team_ids_filters(world: Any) -> None:
    env, client, session = world
    team = session.rpost("teams", json={"type": "team", "name": "Payments", "description": "Money"})
    assert team["type"] == "team" and team["name"] == "Payments" and team["default_role"] == "manager"
    renamed = client.rput(f"teams/{team['id']}", json={"type": "team", "name": "Payments core"})
    assert renamed["name"] == "Payments core" and renamed["description"] == "Money"
    assert [t["name"] for t in session.list_all("teams", params={"query": "core"})] == ["Payments core"]

    client.rput(f"teams/{team['id']}/users/{_ref(env, 'pd_laura')}", json={"role": "responder"})
    session.rput(f"teams/{team['id']}/users/{_ref(env, 'pd_mike')}", json={"role": "observer"})
    members = client.list_all(f"teams/{team['id']}/members")
    assert {(m["user"]["summary"], m["role"]) for m in members} == {
        ("Laura Diaz", "responder"),
        ("Mike Chen", "observer"),
    }
    assert [u["name"] for u in client.list_all("users", params={"team_ids[]": [team["id"]]})] == [
        "Laura Diaz",
        "Mike Chen",
    ]
    assert client.rget(f"users/{_ref(env, 'pd_laura')}")["teams"][0]["id"] == team["id"]
    client.delete(f"teams/{team['id']}/users/{_ref(env, 'pd_mike')}")
    assert [m["user"]["summary"] for m in client.list_all(f"teams/{team['id']}/members")] == ["Laura Diaz"]

    policy = _ref(env, "pd_orders_policy")
    client.rput(f"teams/{team['id']}/escalation_policies/{policy}")
    assert [p["id"] for p in client.list_all("escalation_policies", params={"team_ids[]": [team["id"]]})] == [
        policy
    ]
    assert {s["name"] for s in client.list_all("services", params={"team_ids[]": [team["id"]]})} == {
        "Orders API",
        "Billing",
    }
    open_ones = client.list_all("incidents", params={"team_ids[]": [team["id"]], "date_range": "all"})
    assert [i["title"] for i in open_ones] == ["Disk full on db-1", "Invoices delayed"]
    assert open_ones[0]["teams"][0]["id"] == team["id"]
    session.delete(f"teams/{team['id']}/escalation_policies/{policy}")
    assert client.list_all("services", params={"team_ids[]": [team["id"]]}) == []

    client.delete(f"teams/{team['id']}")
    with pytest.raises(pagerduty.HttpError) as missing:
        client.rget(f"teams/{team['id']}")
    assert _answer(missing).status_code == 404
    assert client.rget(f"users/{_ref(env, 'pd_laura')}")["teams"] == []


def test_teams__bad_input_gets_pagerduty_400s(world: Any) -> None:
    _, client, _ = world
    client.rpost("teams", json={"type": "team", "name": "Payments"})
    for body, error in (
        ({"type": "team", "name": ""}, "Name cannot be empty."),
        ({"type": "team", "name": "payments"}, "Name has already been taken."),
        ({"type": "team", "name": "X", "default_role": "owner"}, "Default role must be manager or none."),
    ):
        with pytest.raises(pagerduty.HttpError) as refused:
            client.rpost("teams", json=body)
        assert _answer(refused).status_code == 400
        assert _answer(refused).json()["error"]["errors"] == [error]


# --- schedule overrides ------------------------------------------------------------------


def test_overrides__take_the_schedule_over_in_oncalls_final_schedule_and_paging(world: Any) -> None:
    env, client, session = world
    schedule = _ref(env, "pd_primary")
    # Ben's week (2026-03-02 09:00 on); Laura covers the first two hours.
    created = client.post(
        f"schedules/{schedule}/overrides",
        json={
            "overrides": [
                {
                    "start": "2026-03-02T09:00:00Z",
                    "end": "2026-03-02T11:00:00Z",
                    "user": _reference("user", _ref(env, "pd_laura")),
                    "time_zone": "UTC",
                },
                {
                    "start": "2026-03-02T12:00:00Z",
                    "end": "2026-03-02T12:00:00Z",
                    "user": _reference("user", _ref(env, "pd_laura")),
                },
            ]
        },
    )
    assert created.status_code == 201
    answers = created.json()
    assert [a["status"] for a in answers] == [201, 400]
    assert answers[1]["errors"] == ["Override must end after its start"]
    override = answers[0]["override"]
    assert override["user"]["summary"] == "Laura Diaz" and override["start"] == "2026-03-02T09:00:00Z"

    listed = session.rget(
        f"schedules/{schedule}/overrides",
        params={"since": "2026-03-02T00:00:00Z", "until": "2026-03-03T00:00:00Z"},
    )
    assert [o["id"] for o in listed] == [override["id"]]
    level_one = [o["user"]["summary"] for o in client.list_all("oncalls") if o["escalation_level"] == 1]
    assert level_one == ["Laura Diaz"]
    rendered = client.rget(
        f"schedules/{schedule}", params={"since": "2026-03-02T09:00:00Z", "until": "2026-03-02T13:00:00Z"}
    )
    entries = [
        (e["user"]["summary"], e["start"], e["end"])
        for e in rendered["final_schedule"]["rendered_schedule_entries"]
    ]
    assert entries == [
        ("Laura Diaz", "2026-03-02T09:00:00Z", "2026-03-02T11:00:00Z"),
        ("Ben Okafor", "2026-03-02T11:00:00Z", "2026-03-02T13:00:00Z"),
    ]
    assert rendered["overrides_subschedule"]["rendered_coverage_percentage"] == 50.0
    incident = client.rpost(
        "incidents",
        json={
            "type": "incident",
            "title": "Orders down",
            "service": _reference("service", _ref(env, "pagerduty_orders")),
        },
    )
    assert [a["assignee"]["summary"] for a in incident["assignments"]] == ["Laura Diaz"]

    advance(env, 3600)  # under way: deleting it ends it now (200, truncated)
    ended = client.delete(f"schedules/{schedule}/overrides/{override['id']}")
    assert ended.status_code == 200 and ended.json()["override"]["end"] == "2026-03-02T10:00:00Z"
    assert [o["user"]["summary"] for o in client.list_all("oncalls") if o["escalation_level"] == 1] == [
        "Ben Okafor"
    ]


def test_overrides__a_future_one_is_deleted_and_an_unknown_one_is_404(world: Any) -> None:
    env, client, _ = world
    schedule = _ref(env, "pd_primary")
    made = client.post(
        f"schedules/{schedule}/overrides",
        json={
            "overrides": [
                {
                    "start": "2026-03-03T09:00:00Z",
                    "end": "2026-03-03T11:00:00Z",
                    "user": _reference("user", _ref(env, "pd_mike")),
                }
            ]
        },
    ).json()[0]["override"]
    assert client.delete(f"schedules/{schedule}/overrides/{made['id']}").status_code == 204
    assert client.delete(f"schedules/{schedule}/overrides/{made['id']}").status_code == 404
    with pytest.raises(pagerduty.HttpError) as refused:
        client.rget(f"schedules/{schedule}/overrides")
    assert _answer(refused).status_code == 400


# --- maintenance windows -----------------------------------------------------------------


def _paged(env: Environment, service: str) -> list[DomainEvent]:
    seen: list[DomainEvent] = []
    env.bus.subscribe("notification_sent", lambda e: seen.append(e) if e.data["service"] == service else None)
    return seen


def test_maintenance_window__events_make_no_incident_and_rest_incidents_page_nobody(world: Any) -> None:
    env, client, session = world
    orders = _ref(env, "pagerduty_orders")
    window = session.rpost(
        "maintenance_windows",
        json={
            "maintenance_window": {
                "type": "maintenance_window",
                "start_time": "2026-03-02T09:00:00Z",
                "end_time": "2026-03-02T10:00:00Z",
                "description": "DB upgrade",
                "services": [_reference("service", orders)],
            }
        },
    )
    assert window["sequence_number"] == 1 and window["created_by"]["summary"] == "Ancha Agent"
    assert window["services"][0]["id"] == orders
    paged = _paged(env, orders)
    replica: Any = env.tools["pagerduty"]

    events = pagerduty.EventsApiV2Client(routing_key(env), base_url=client.url)
    events._transport = client._transport
    assert events.trigger("Orders 5xx", "orders-api", dedup_key="orders-5xx") == "orders-5xx"
    assert client.list_all("incidents", params={"incident_key": "orders-5xx"}) == []
    made = client.rpost(
        "incidents", json={"type": "incident", "title": "By hand", "service": _reference("service", orders)}
    )
    advance(env, 1800)
    assert paged == [] and client.rget(f"incidents/{made['id']}")["assignments"]
    assert [w["id"] for w in client.list_all("maintenance_windows", params={"filter": "ongoing"})] == [
        window["id"]
    ]
    advance(env, 1800)  # the window is over
    assert [w["id"] for w in client.list_all("maintenance_windows", params={"filter": "past"})] == [
        window["id"]
    ]
    events.trigger("Orders 5xx", "orders-api", dedup_key="orders-5xx")
    fresh = client.list_all("incidents", params={"incident_key": "orders-5xx"})
    assert len(fresh) == 1 and [e.data["incident"] for e in paged] == [fresh[0]["id"]]
    assert replica.state.maintenance_windows[window["id"]].end == env.clock.start + 3600


def test_maintenance_window__update_filters_and_delete_rules(world: Any) -> None:
    env, client, _ = world
    billing = _reference("service", _ref(env, "pagerduty_billing"))
    later = client.rpost(
        "maintenance_windows",
        json={
            "maintenance_window": {
                "type": "maintenance_window",
                "start_time": "2026-03-03T09:00:00Z",
                "end_time": "2026-03-03T10:00:00Z",
                "services": [billing],
            }
        },
    )
    now = client.rpost(
        "maintenance_windows",
        json={
            "maintenance_window": {
                "type": "maintenance_window",
                "start_time": "2026-03-01T00:00:00Z",
                "end_time": "2026-03-02T10:00:00Z",
                "services": [billing],
            }
        },
    )
    assert now["start_time"] == "2026-03-02T09:00:00Z"  # a start in the past becomes now
    assert [w["id"] for w in client.list_all("maintenance_windows", params={"filter": "future"})] == [
        later["id"]
    ]
    assert (
        client.rput(
            f"maintenance_windows/{later['id']}",
            json={"maintenance_window": {"type": "maintenance_window", "description": "Moved"}},
        )["description"]
        == "Moved"
    )
    with pytest.raises(pagerduty.HttpError) as refused:
        client.rpost(
            "maintenance_windows",
            json={
                "maintenance_window": {
                    "type": "maintenance_window",
                    "start_time": "2026-03-02T08:00:00Z",
                    "end_time": "2026-03-02T08:30:00Z",
                    "services": [billing],
                }
            },
        )
    assert _answer(refused).json()["error"]["errors"] == ["End time must be in the future."]
    with pytest.raises(pagerduty.HttpError) as bad_filter:
        client.list_all("maintenance_windows", params={"filter": "soon"})
    assert _answer(bad_filter).status_code == 400
    assert client.delete(f"maintenance_windows/{later['id']}").status_code == 204  # future: gone
    assert client.delete(f"maintenance_windows/{now['id']}").status_code == 204  # ongoing: ends now
    assert client.rget(f"maintenance_windows/{now['id']}")["end_time"] == "2026-03-02T09:00:00Z"
    gone = client.delete(f"maintenance_windows/{now['id']}")
    assert gone.status_code == 405
