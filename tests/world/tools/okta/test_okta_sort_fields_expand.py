"""sortBy/sortOrder, fields and expand through the official okta SDK, on list users and list
groups (and expand on get user), and every URL an answer hands out leading back to the
replica."""

from __future__ import annotations

import re
from typing import Any

from okta.models import CreateUserRequest
from okta.pagination import PaginationHelper

from conftest import Org, run

ACTIVE = 'status eq "ACTIVE" or status eq "SUSPENDED" or status eq "LOCKED_OUT" or status eq "STAGED"'


def _last_names(users: list[Any]) -> list[str]:
    return [u.profile.last_name for u in users]


def test_sort_by_with_search__asc_desc_and_pages_in_order(org: Org) -> None:
    users, _, err = org.sdk("list_users", search=ACTIVE, sort_by="profile.lastName")
    assert err is None and _last_names(users) == ["Hire", "Mulder", "Scully", "Skinner"]
    users, _, err = org.sdk("list_users", search=ACTIVE, sort_by="profile.lastName", sort_order="desc")
    assert err is None and _last_names(users) == ["Skinner", "Scully", "Mulder", "Hire"]

    async def pages() -> list[str]:
        client = org.client()
        found: list[str] = []
        cursor = None
        while True:
            users, resp, err = await client.list_users(search=ACTIVE, sort_by="profile.lastName",
                                                       sort_order="desc", limit=3, after=cursor)
            assert err is None
            found += _last_names(users)
            cursor = PaginationHelper.extract_next_cursor(resp.headers)
            if cursor is None:
                return found
    assert run(pages()) == ["Skinner", "Scully", "Mulder", "Hire"]


def test_sort_by__ties_by_id_and_ignored_without_search(org: Org) -> None:
    for login in ("b@acme.com", "a@acme.com"):
        org.sdk("create_user", CreateUserRequest.from_dict({"profile": {
            "login": login, "email": login, "firstName": "Twin", "lastName": "Same"}}), activate=False)
    users, _, _ = org.sdk("list_users", search='profile.lastName eq "Same"', sort_by="profile.lastName")
    assert [u.profile.login for u in users] == ["b@acme.com", "a@acme.com"]  # created first, smaller id
    plain, _, _ = org.sdk("list_users", sort_by="profile.lastName", sort_order="desc")
    unsorted, _, _ = org.sdk("list_users")
    assert [u.id for u in plain] == [u.id for u in unsorted]  # "for search queries only"
    bad = org.raw("GET", "/api/v1/users", params={"search": ACTIVE, "sortBy": "id", "sortOrder": "sideways"})
    assert bad.status_code == 400 and bad.json()["errorSummary"] == "Api validation failed: sortOrder"


def test_fields__projects_users_and_keeps_id(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/users", params={"search": 'profile.login eq "dana@acme.com"',
                                                     "fields": "status,profile:(firstName,lastName)"})
    assert answer.status_code == 200
    [dana] = answer.json()
    assert dana == {"id": dana["id"], "status": "ACTIVE", "profile": {"firstName": "Dana", "lastName": "Scully"}}
    users, _, err = org.sdk("list_users", filter='profile.login eq "dana@acme.com"', fields="id,profile:(email)")
    assert err is None and users[0].profile.email == "dana@acme.com" and users[0].profile.first_name is None
    bad = org.raw("GET", "/api/v1/users", params={"fields": "profile:(firstName"})
    assert bad.status_code == 400 and bad.json()["errorSummary"] == "Api validation failed: fields"


def test_groups__expand_stats_and_sort_by_with_search(org: Org) -> None:
    groups, _, err = org.sdk("list_groups", expand="stats")
    assert err is None
    raw = org.raw("GET", "/api/v1/groups", params={"expand": "stats,app"}).json()
    counts = {g["profile"]["name"]: g["_embedded"]["stats"]["usersCount"] for g in raw}
    assert counts == {"Everyone": 7, "Engineering": 2, "Sales": 1, "VPN Users": 1}
    assert raw[1]["_embedded"]["stats"] == {"usersCount": 2, "appsCount": 0, "groupPushMappingsCount": 0,
                                            "hasAdminPrivlege": False}
    assert "_embedded" not in org.raw("GET", "/api/v1/groups").json()[0]
    groups, _, err = org.sdk("list_groups", search='type eq "OKTA_GROUP"', sort_by="profile.name",
                             sort_order="desc")
    assert err is None and [g.profile.actual_instance.name for g in groups] == ["VPN Users", "Sales",
                                                                                 "Engineering"]


def test_get_user__expand_blocks_and_classification(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/users/dana@acme.com", params={"expand": "blocks,classification"})
    embedded = answer.json()["_embedded"]
    assert embedded["blocks"] == [] and embedded["classification"]["type"] == "STANDARD"
    # blocks is an array, as Okta's UserGetSingleton says; the SDK's model types every
    # _embedded value as an object, so through the SDK only classification parses.
    user, _, err = org.sdk("get_user", "dana@acme.com", expand="classification")
    assert err is None and user.embedded["classification"]["type"] == "STANDARD"


_URL = re.compile(r"https?://[^\s\"'<>]+")


def test_every_url_handed_out__leads_back_to_the_replica(org: Org) -> None:
    hook = {"name": "h", "events": {"type": "EVENT_TYPE", "items": ["user.lifecycle.create"]},
            "channel": {"type": "HTTP", "version": "1.0.0", "config": {"uri": "https://hooks.acme.test/x"}}}
    hook_id = org.raw("POST", "/api/v1/eventHooks", json=hook).json()["id"]
    org.raw("POST", f"/api/v1/users/{org.user_id('fox@acme.com')}/lifecycle/unsuspend")
    answers = [org.raw("GET", path, params=params) for path, params in [
        ("/api/v1/users", {"limit": "2"}), ("/api/v1/groups", {"expand": "stats"}),
        (f"/api/v1/groups/{org.group_id('Engineering')}/users", {}), ("/api/v1/users/dana@acme.com/groups", {}),
        ("/api/v1/eventHooks", {}), (f"/api/v1/eventHooks/{hook_id}", {}), ("/api/v1/logs", {"limit": "1"})]]
    answers.append(org.raw("POST", f"/api/v1/users/{org.user_id('new@acme.com')}/lifecycle/activate",
                           params={"sendEmail": "false"}))
    urls = set()
    for answer in answers:
        assert answer.status_code == 200
        urls.update(_URL.findall(answer.text))
        urls.update(_URL.findall(answer.headers.get("link", "")))
    urls.discard("https://hooks.acme.test/x")  # the agent's own hook URI, echoed back
    assert urls and all(u.startswith(org.url) for u in urls), sorted(u for u in urls if not u.startswith(org.url))
    logo = next(u for u in urls if u.endswith(".png"))
    image = org.raw("GET", logo, token=None)
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG")
