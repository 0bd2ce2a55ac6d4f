"""Users through the official okta SDK against the real server: list with filter, search,
q and cursor pagination (Okta's Link headers), get by id or login, create, update, the
401 for a bad token."""

from __future__ import annotations

from typing import Any

from okta.client import Client as OktaClient
from okta.models import CreateUserRequest
from okta.pagination import PaginationHelper, paginate_all

from conftest import Org, run


def _logins(users: list[Any]) -> list[str]:
    return [u.profile.login for u in users]


def test_list_users__all_but_deprovisioned_in_creation_order(org: Org) -> None:
    users, resp, err = org.sdk("list_users")
    assert err is None and resp.status_code == 200
    assert _logins(users) == ["dana@acme.com", "fox@acme.com", "walter@acme.com", "new@acme.com", "prov@acme.com",
                              "exp@acme.com"]
    assert users[0].status.value == "ACTIVE" and users[1].status.value == "SUSPENDED"
    assert users[0].profile.first_name == "Dana"


def test_list_users__filter_by_status_includes_deprovisioned(org: Org) -> None:
    users, _, err = org.sdk("list_users", filter='status eq "DEPROVISIONED"')
    assert err is None and _logins(users) == ["gone@acme.com"]
    users, _, _ = org.sdk("list_users", filter='status eq "SUSPENDED" or status eq "LOCKED_OUT"')
    assert _logins(users) == ["fox@acme.com", "walter@acme.com"]


def test_list_users__filter_by_login_and_search_and_q(org: Org) -> None:
    users, _, _ = org.sdk("list_users", filter='profile.login eq "DANA@acme.com"')
    assert _logins(users) == ["dana@acme.com"]
    users, _, _ = org.sdk("list_users", search='profile.lastName sw "Sk" and status eq "LOCKED_OUT"')
    assert _logins(users) == ["walter@acme.com"]
    users, _, _ = org.sdk("list_users", q="fo")
    assert _logins(users) == ["fox@acme.com"]


def test_list_users__bad_filter_is_okta_invalid_search(org: Org) -> None:
    users, _, err = org.sdk("list_users", filter='profile.department eq "x"')
    assert users is None and err is not None
    answer = org.raw("GET", "/api/v1/users", params={"filter": 'status eq "ACTIVE'})
    assert answer.status_code == 400 and answer.json()["errorCode"] == "E0000031"


def test_list_users__pages_by_cursor_in_link_headers(org: Org) -> None:
    users, resp, err = org.sdk("list_users", limit=2)
    assert err is None and _logins(users) == ["dana@acme.com", "fox@acme.com"]
    cursor = PaginationHelper.extract_next_cursor(resp.headers)
    assert cursor == users[-1].id
    link = next(v for k, v in resp.headers.items() if k.lower() == "link")
    assert link.startswith(f'<{org.url}/api/v1/users?limit=2>; rel="self", <{org.url}/api/v1/users?after={cursor}')
    second, resp, _ = org.sdk("list_users", limit=2, after=cursor)
    assert _logins(second) == ["walter@acme.com", "new@acme.com"]

    async def every() -> list[Any]:
        client = OktaClient({"orgUrl": org.url, "token": org.token})
        return [u async for u in paginate_all(client.list_users, limit=2)]
    assert len(run(every())) == 6
    last, resp, _ = org.sdk("list_users", limit=2, after=second[-1].id)
    assert len(last) == 2 and PaginationHelper.extract_next_cursor(resp.headers) is None


def test_get_user__by_id_or_login_and_okta_404(org: Org) -> None:
    user, _, err = org.sdk("get_user", "dana@acme.com")
    assert err is None and user.profile.email == "dana@acme.com"
    again, _, _ = org.sdk("get_user", user.id)
    assert again.id == user.id and again.links.var_self.href == f"{org.url}/api/v1/users/{user.id}"
    answer = org.raw("GET", "/api/v1/users/nobody@acme.com")
    assert answer.status_code == 404
    body = answer.json()
    assert body["errorCode"] == "E0000007" and body["errorSummary"] == \
        "Not found: Resource not found: nobody@acme.com (User)"
    assert body["errorLink"] == "E0000007" and body["errorId"] and body["errorCauses"] == []


def test_bad_token__okta_401(org: Org) -> None:
    answer = org.raw("GET", "/api/v1/users", token="00" + "x" * 40)
    assert answer.status_code == 401
    assert answer.json()["errorCode"] == "E0000011" and answer.json()["errorSummary"] == "Invalid token provided"
    assert org.raw("GET", "/api/v1/users", token=None).status_code == 401
    users, _, err = OktaClient and run(_list_with(org.url, "00" + "y" * 40))
    assert users is None and err is not None


async def _list_with(url: str, token: str) -> Any:
    return await OktaClient({"orgUrl": url, "token": token}).list_users()


def test_create_user__activate_with_and_without_password(org: Org) -> None:
    body = CreateUserRequest.from_dict({"profile": {"firstName": "Ada", "lastName": "Lovelace",
                                                    "email": "ada@acme.com", "login": "ada@acme.com"},
                                        "credentials": {"password": {"value": "Sup3rSecret!"}}})
    user, _, err = org.sdk("create_user", body)
    assert err is None and user.status.value == "ACTIVE" and user.activated is not None
    staged = CreateUserRequest.from_dict({"profile": {"firstName": "Bo", "lastName": "B", "email": "bo@acme.com",
                                                      "login": "bo@acme.com"}})
    user, _, err = org.sdk("create_user", staged, activate=False)
    assert err is None and user.status.value == "STAGED"
    provisioned = CreateUserRequest.from_dict({"profile": {"firstName": "Cy", "lastName": "C", "email": "cy@acme.com",
                                                           "login": "cy@acme.com"}})
    user, _, err = org.sdk("create_user", provisioned)
    assert err is None and user.status.value == "PROVISIONED"


def test_create_user__duplicate_login_and_missing_fields(org: Org) -> None:
    answer = org.raw("POST", "/api/v1/users", json={"profile": {"firstName": "D", "lastName": "S",
                                                                 "email": "dana@acme.com", "login": "Dana@acme.com"}})
    assert answer.status_code == 400
    assert answer.json()["errorSummary"] == "Api validation failed: login"
    assert answer.json()["errorCauses"] == [
        {"errorSummary": "login: An object with this field already exists in the current organization"}]
    answer = org.raw("POST", "/api/v1/users", json={"profile": {"login": "x@acme.com"}})
    assert answer.status_code == 400 and answer.json()["errorCode"] == "E0000001"
    answer = org.raw("POST", "/api/v1/users", content=b"{nope", headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["errorCode"] == "E0000003"


def test_update_user__partial_post_and_full_put(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    answer = org.raw("POST", f"/api/v1/users/{dana}", json={"profile": {"mobilePhone": "555-0100"}})
    assert answer.status_code == 200
    assert answer.json()["profile"]["mobilePhone"] == "555-0100" and answer.json()["profile"]["firstName"] == "Dana"
    answer = org.raw("PUT", f"/api/v1/users/{dana}", json={"profile": {"login": "dana.s@acme.com",
                                                                       "email": "dana.s@acme.com",
                                                                       "firstName": "Dana", "lastName": "S"}})
    assert answer.status_code == 200 and answer.json()["profile"]["mobilePhone"] is None
    assert org.raw("GET", "/api/v1/users/dana.s@acme.com").json()["id"] == dana
    assert org.raw("GET", "/api/v1/users/dana@acme.com").status_code == 404


def test_update_user__deprovisioned_is_okta_e0000038(org: Org) -> None:
    gone = org.user_id("gone@acme.com")
    answer = org.raw("POST", f"/api/v1/users/{gone}", json={"profile": {"firstName": "Back"}})
    assert answer.status_code == 403 and answer.json()["errorCode"] == "E0000038"
