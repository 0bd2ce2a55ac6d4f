"""Groups and membership through the official okta SDK: list, get, create, replace,
delete, members, add and remove, a user's groups, and the built-in Everyone."""

from __future__ import annotations

from okta.models import AddGroupRequest

from conftest import Org


def _names(groups: list) -> list[str]:  # type: ignore[type-arg]
    return [g.profile.actual_instance.name for g in groups]


def test_list_groups__everyone_first_then_seeded_and_q(org: Org) -> None:
    groups, _, err = org.sdk("list_groups")
    assert err is None and _names(groups) == ["Everyone", "Engineering", "Sales", "VPN Users"]
    assert groups[0].type.value == "BUILT_IN" and groups[1].type.value == "OKTA_GROUP"
    groups, _, _ = org.sdk("list_groups", q="eng")
    assert _names(groups) == ["Engineering"]
    groups, _, _ = org.sdk("list_groups", filter='type eq "OKTA_GROUP"', limit=2)
    assert _names(groups) == ["Engineering", "Sales"]


def test_create_replace_delete_group(org: Org) -> None:
    group, _, err = org.sdk("add_group", AddGroupRequest.from_dict({"profile": {"name": "Contractors",
                                                                                "description": "Temps"}}))
    assert err is None and group.id.startswith("00g")
    answer = org.raw("PUT", f"/api/v1/groups/{group.id}", json={"profile": {"name": "Vendors"}})
    assert answer.status_code == 200 and answer.json()["profile"] == {"name": "Vendors"}
    duplicate = org.raw("POST", "/api/v1/groups", json={"profile": {"name": "sales"}})
    assert duplicate.status_code == 400 and duplicate.json()["errorCauses"] == [
        {"errorSummary": "name: An object with this field already exists in the current organization"}]
    _, resp, err = org.sdk("delete_group", group.id)
    assert err is None and resp.status_code == 204
    gone = org.raw("GET", f"/api/v1/groups/{group.id}")
    assert gone.status_code == 404 and gone.json()["errorSummary"] == \
        f"Not found: Resource not found: {group.id} (UserGroup)"


def test_members__list_add_remove_and_user_groups(org: Org) -> None:
    eng, fox = org.group_id("Engineering"), org.user_id("fox@acme.com")
    users, _, err = org.sdk("list_group_users", eng)
    assert err is None and [u.profile.login for u in users] == ["dana@acme.com", "fox@acme.com"]
    sales = org.group_id("Sales")
    _, resp, err = org.sdk("assign_user_to_group", sales, fox)
    assert err is None and resp.status_code == 204
    groups, _, _ = org.sdk("list_user_groups", fox)
    assert _names(groups) == ["Everyone", "Engineering", "Sales"]
    _, resp, err = org.sdk("unassign_user_from_group", eng, fox)
    assert err is None and resp.status_code == 204
    groups, _, _ = org.sdk("list_user_groups", fox)
    assert _names(groups) == ["Everyone", "Sales"]
    page, resp, _ = org.sdk("list_group_users", eng, limit=1)
    assert [u.profile.login for u in page] == ["dana@acme.com"]


def test_everyone__members_cannot_be_changed(org: Org) -> None:
    everyone, dana = org.group_id("Everyone"), org.user_id("dana@acme.com")
    removed = org.raw("DELETE", f"/api/v1/groups/{everyone}/users/{dana}")
    assert removed.status_code == 403 and removed.json()["errorCode"] == "E0000006"
    assert org.raw("DELETE", f"/api/v1/groups/{everyone}").status_code == 403
    added = org.raw("PUT", f"/api/v1/groups/{everyone}/users/{dana}")
    assert added.status_code == 400 and added.json()["errorSummary"] == "Unsupported operation."


def test_membership__unknown_user_or_group_is_okta_404(org: Org) -> None:
    eng = org.group_id("Engineering")
    answer = org.raw("PUT", f"/api/v1/groups/{eng}/users/00unope")
    assert answer.status_code == 404 and answer.json()["errorSummary"] == "Not found: Resource not found: 00unope (User)"
    answer = org.raw("PUT", f"/api/v1/groups/00gnope/users/{org.user_id('dana@acme.com')}")
    assert answer.status_code == 404 and "(UserGroup)" in answer.json()["errorSummary"]
