"""The System Log through the official okta SDK (``list_log_events``): every change the agent
makes is a LogEvent in Okta's shape at the world's time, found again by since/until,
filter (over ``target[]`` too), q, sortOrder, limit and the Link header's next page."""

from __future__ import annotations

import json
from typing import Any

from okta.models import AddGroupRequest, CreateUserRequest
from okta.pagination import PaginationHelper

from ancha.world.kernel.tool import ToolRequest
from conftest import Org, build_env, run, world_call

LOG_EVENT_KEYS = {"uuid", "published", "eventType", "version", "severity", "displayMessage", "actor", "client",
                  "outcome", "target", "transaction", "debugContext", "authenticationContext", "securityContext",
                  "legacyEventType", "request"}
BOUNDED = {"since": "2000-01-01T00:00:00.000Z", "until": "2100-01-01T00:00:00.000Z"}


def _logs(org: Org, **params: Any) -> list[dict[str, Any]]:
    answer = org.raw("GET", "/api/v1/logs", params=params)
    assert answer.status_code == 200, answer.text
    return list(answer.json())


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [e["eventType"] for e in events]


def test_seeded_org__empty_log(org: Org) -> None:
    events, _, err = org.sdk("list_log_events")
    assert err is None and events == []


def test_agent_changes__logged_in_okta_shape_at_the_world_clock(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    sales = org.group_id("Sales")
    user, _, err = org.sdk("create_user", CreateUserRequest.from_dict({"profile": {
        "login": "mo@acme.com", "email": "mo@acme.com", "firstName": "Mo", "lastName": "Reed"}}), activate=False)
    assert err is None
    org.sdk("deactivate_user", dana)
    org.sdk("assign_user_to_group", sales, user.id)
    org.sdk("unassign_user_from_group", sales, user.id)
    group, _, _ = org.sdk("add_group", AddGroupRequest.from_dict({"profile": {"name": "Temps"}}))
    org.sdk("delete_group", group.id)

    events, _, err = org.sdk("list_log_events")
    assert err is None
    assert [e.event_type for e in events] == [
        "user.lifecycle.create", "user.lifecycle.deactivate", "group.user_membership.add",
        "group.user_membership.remove", "group.lifecycle.create", "group.lifecycle.delete"]
    raw = _logs(org)
    assert all(set(e) >= LOG_EVENT_KEYS for e in raw)
    deactivate = raw[1]
    assert deactivate["displayMessage"] == "Deactivate Okta user"
    assert deactivate["legacyEventType"] == "core.user.config.user_deactivated"
    assert deactivate["outcome"] == {"result": "SUCCESS", "reason": None}
    assert deactivate["severity"] == "INFO" and deactivate["actor"]["type"] == "User"
    assert deactivate["target"] == [{"id": dana, "type": "User", "alternateId": "dana@acme.com",
                                     "displayName": "Dana Scully", "detailEntry": None}]
    assert deactivate["debugContext"]["debugData"]["requestUri"] == f"/api/v1/users/{dana}/lifecycle/deactivate"
    assert deactivate["client"]["userAgent"]["rawUserAgent"].endswith("python")  # the SDK's own User-Agent
    assert raw[2]["target"][1] == {"id": sales, "type": "UserGroup", "alternateId": "Sales", "displayName": "Sales",
                                   "detailEntry": None}
    # published is the world's clock, the same as the user's own timestamps
    assert deactivate["published"] == org.raw("GET", f"/api/v1/users/{dana}").json()["statusChanged"]
    assert len({e["uuid"] for e in raw}) == len(raw)


def test_filter__event_type_and_target_id_and_or(org: Org) -> None:
    dana, fox = org.user_id("dana@acme.com"), org.user_id("fox@acme.com")
    org.sdk("suspend_user", dana)
    org.sdk("unsuspend_user", fox)
    org.sdk("deactivate_user", fox)
    events, _, err = org.sdk("list_log_events", filter='eventType eq "user.lifecycle.deactivate"')
    assert err is None and [e.target[0].id for e in events] == [fox]
    assert _types(_logs(org, filter=f'target.id eq "{fox}"')) == ["user.lifecycle.unsuspend",
                                                                  "user.lifecycle.deactivate"]
    both = _logs(org, filter=f'(target.id eq "{dana}" or target.id eq "{fox}") and eventType sw "user.lifecycle.'
                              'suspend"')
    assert _types(both) == ["user.lifecycle.suspend"]
    assert _types(_logs(org, filter='target.type eq "User" and not (eventType eq "user.lifecycle.suspend")')) == [
        "user.lifecycle.unsuspend", "user.lifecycle.deactivate"]
    bad = org.raw("GET", "/api/v1/logs", params={"filter": "eventType eq"})
    assert bad.status_code == 400 and bad.json()["errorCode"] == "E0000031"


def test_q__case_insensitive_keywords_all_required(org: Org) -> None:
    org.sdk("suspend_user", org.user_id("dana@acme.com"))
    org.sdk("unsuspend_user", org.user_id("fox@acme.com"))
    events, _, err = org.sdk("list_log_events", q="SCULLY suspend")
    assert err is None and [e.event_type for e in events] == ["user.lifecycle.suspend"]
    assert _types(_logs(org, q="mulder")) == ["user.lifecycle.unsuspend"]
    assert _logs(org, q="scully mulder") == []
    too_many = org.raw("GET", "/api/v1/logs", params={"q": " ".join(["a"] * 11)})
    assert too_many.status_code == 400 and too_many.json()["errorCode"] == "E0000001"


def test_since_until__window_and_okta_error_for_a_bad_date(org: Org) -> None:
    org.sdk("suspend_user", org.user_id("dana@acme.com"))
    published = _logs(org)[0]["published"]  # since is inclusive, until exclusive
    assert _logs(org, since=published, until=published) == []
    later = published[:-4] + f"{int(published[-4:-1]) + 1:03d}Z" if published[-4:-1] != "999" else published
    assert len(_logs(org, since=published, until=later)) == 1
    assert _logs(org, until="2000-01-01T00:00:00.000Z") == []
    assert _logs(org, since="2099-01-01T00:00:00.000Z") == []
    _, _, err = org.sdk("list_log_events", since="yesterday")
    assert err is not None
    bad = org.raw("GET", "/api/v1/logs", params={"since": "yesterday"})
    assert bad.status_code == 400 and bad.json()["errorCode"] == "E0000001"
    assert bad.json()["errorSummary"] == "Api validation failed: since"


def test_limit_sort_order_and_next_links(org: Org) -> None:
    for login in ("dana@acme.com", "fox@acme.com", "walter@acme.com"):
        org.sdk("deactivate_user", org.user_id(login))

    async def all_pages(**params: Any) -> list[str]:
        client = org.client()
        events, resp, err = await client.list_log_events(limit=2, **params)
        assert err is None
        found = [e.target[0].alternate_id for e in events]
        while (cursor := PaginationHelper.extract_next_cursor(resp.headers)) is not None:
            events, resp, err = await client.list_log_events(limit=2, after=cursor, **params)
            assert err is None
            found += [e.target[0].alternate_id for e in events]
        return found

    bounded = {"since": BOUNDED["since"], "until": BOUNDED["until"]}
    assert run(all_pages(**bounded)) == ["dana@acme.com", "fox@acme.com", "walter@acme.com"]
    assert run(all_pages(sort_order="DESCENDING", **bounded)) == ["walter@acme.com", "fox@acme.com",
                                                                  "dana@acme.com"]
    # A polling query (no until) always has a next link, to be followed for later events.
    first = org.raw("GET", "/api/v1/logs", params={"limit": 3})
    assert len(first.json()) == 3 and 'rel="next"' in first.headers["link"]
    follow = first.links["next"]["url"]
    assert follow.startswith(org.url) and org.raw("GET", follow).json() == []
    org.sdk("activate_user", org.user_id("dana@acme.com"), send_email=False)
    assert _types(org.raw("GET", follow).json()) == ["user.lifecycle.activate"]
    bounded_page = org.raw("GET", "/api/v1/logs", params={"limit": 10, **BOUNDED})
    assert 'rel="next"' not in bounded_page.headers["link"]
    bad = org.raw("GET", "/api/v1/logs", params={"sortOrder": "SIDEWAYS"})
    assert bad.status_code == 400 and bad.json()["errorCode"] == "E0000001"


def test_world_changes__logged_as_okta_system() -> None:
    env = build_env()
    replica = env.tools["okta"]
    env.dispatch("okta", ToolRequest("POST", "/api/v1/users/fox@acme.com/lifecycle/unsuspend", "",
                                     {"authorization": f"SSWS {replica.world_token}"}, b""))
    event = json.loads(world_call(env, "GET", "/api/v1/logs").body)[0]
    assert event["actor"] == {"id": event["actor"]["id"], "type": "SystemPrincipal", "alternateId": "system@okta.com",
                              "displayName": "Okta System", "detailEntry": None}
    assert event["eventType"] == "user.lifecycle.unsuspend" and event["target"][0]["alternateId"] == "fox@acme.com"
