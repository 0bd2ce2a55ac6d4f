"""User lifecycle through the official okta SDK: each operation from the status it needs,
Okta's error body and status for the wrong state, delete twice, and the domain events."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from conftest import Org, build_env, world_call


def _status(org: Org, login: str) -> str:
    return str(org.raw("GET", f"/api/v1/users/{login}").json()["status"])


def _error(org: Org, login: str, operation: str) -> httpx.Response:
    return org.raw("POST", f"/api/v1/users/{org.user_id(login)}/lifecycle/{operation}")


def test_suspend_then_unsuspend__active_user(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    _, _, err = org.sdk("suspend_user", dana)
    assert err is None and _status(org, "dana@acme.com") == "SUSPENDED"
    _, _, err = org.sdk("unsuspend_user", dana)
    assert err is None and _status(org, "dana@acme.com") == "ACTIVE"


def test_deactivate__any_status_but_deprovisioned(org: Org) -> None:
    for login in ("dana@acme.com", "fox@acme.com", "walter@acme.com", "new@acme.com"):
        _, _, err = org.sdk("deactivate_user", org.user_id(login))
        assert err is None and _status(org, login) == "DEPROVISIONED"
    answer = _error(org, "gone@acme.com", "deactivate")
    assert answer.status_code == 403 and answer.json()["errorCode"] == "E0000038"
    assert answer.json()["errorSummary"] == "This operation is not allowed in the user's current status."


def test_activate__staged_without_password_is_provisioned_and_active_is_e0000016(org: Org) -> None:
    token, _, err = org.sdk("activate_user", org.user_id("new@acme.com"), send_email=False)
    assert err is None and token.activation_token and token.activation_url
    assert _status(org, "new@acme.com") == "PROVISIONED"
    _, _, err = org.sdk("activate_user", org.user_id("gone@acme.com"), send_email=True)
    assert err is None and _status(org, "gone@acme.com") == "ACTIVE"
    answer = _error(org, "dana@acme.com", "activate")
    assert answer.status_code == 403
    assert answer.json() | {"errorId": "x"} == {
        "errorCode": "E0000016", "errorSummary": "Activation failed because the user is already active",
        "errorLink": "E0000016", "errorId": "x", "errorCauses": []}


@pytest.mark.parametrize(("login", "operation", "status", "code"), [
    ("fox@acme.com", "suspend", 400, "E0000001"),
    ("dana@acme.com", "unsuspend", 400, "E0000001"),
    ("fox@acme.com", "unlock", 403, "E0000032"),
    ("dana@acme.com", "reactivate", 403, "E0000038"),
    ("new@acme.com", "reset_password", 403, "E0000038"),
    ("fox@acme.com", "expire_password", 403, "E0000038"),
])
def test_wrong_state__okta_error(org: Org, login: str, operation: str, status: int, code: str) -> None:
    before = _status(org, login)
    answer = _error(org, login, operation)
    assert answer.status_code == status and answer.json()["errorCode"] == code
    assert set(answer.json()) == {"errorCode", "errorSummary", "errorLink", "errorId", "errorCauses"}
    assert _status(org, login) == before


def test_wrong_state__sdk_reports_okta_error(org: Org) -> None:
    answer = org.sdk("suspend_user", org.user_id("fox@acme.com"))
    assert answer[-1] is not None and "E0000001" in str(answer[-1])  # the SDK answers (response, error) here


def test_unlock_reset_expire_reactivate(org: Org) -> None:
    _, _, err = org.sdk("unlock_user", org.user_id("walter@acme.com"))
    assert err is None and _status(org, "walter@acme.com") == "ACTIVE"
    reset, _, err = org.sdk("reset_password", org.user_id("walter@acme.com"), send_email=False)
    assert err is None and reset.reset_password_url and _status(org, "walter@acme.com") == "RECOVERY"
    user, _, err = org.sdk("expire_password", org.user_id("dana@acme.com"))
    assert err is None and user.status.value == "PASSWORD_EXPIRED"
    token, _, err = org.sdk("reactivate_user", org.user_id("prov@acme.com"), send_email=False)
    assert err is None and token.activation_token and _status(org, "prov@acme.com") == "PROVISIONED"


def test_admin_password__completes_expired_and_provisioned(org: Org) -> None:
    for login in ("exp@acme.com", "prov@acme.com"):
        answer = org.raw("POST", f"/api/v1/users/{org.user_id(login)}",
                         json={"credentials": {"password": {"value": "N3w-Passw0rd"}}})
        assert answer.status_code == 200 and answer.json()["status"] == "ACTIVE"


def test_delete__first_deactivates_second_deletes(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    _, resp, err = org.sdk("delete_user", dana)
    assert err is None and resp.status_code == 204 and _status(org, "dana@acme.com") == "DEPROVISIONED"
    _, resp, err = org.sdk("delete_user", dana)
    assert err is None and resp.status_code == 204
    answer = org.raw("GET", f"/api/v1/users/{dana}")
    assert answer.status_code == 404 and answer.json()["errorCode"] == "E0000007"
    assert org.raw("DELETE", f"/api/v1/users/{dana}").status_code == 404
    state = org.state()
    assert "dana@acme.com" not in [u["profile"]["login"] for u in state["users"]]
    assert [u["login"] for u in state["deleted_users"]] == ["dana@acme.com"]
    engineering = next(g for g in state["groups"] if g["profile"]["name"] == "Engineering")
    assert engineering["members"] == ["fox@acme.com"]


def test_lifecycle__traced_as_the_agent(org: Org) -> None:
    dana = org.user_id("dana@acme.com")
    org.sdk("deactivate_user", dana)
    entries = [e for e in org.trace() if e["method"] == "POST"]
    assert [(e["actor"], e["path"], e["status"]) for e in entries] == [
        ("agent", f"/api/v1/users/{dana}/lifecycle/deactivate", 200)]


def test_domain_events__status_changes_published() -> None:
    env = build_env()
    seen: list[dict[str, Any]] = []
    env.bus.subscribe("user_status_changed", lambda event: seen.append(event.data))
    user = env.tools["okta"].state.user("dana@acme.com")
    assert world_call(env, "POST", f"/api/v1/users/{user.id}/lifecycle/suspend").status == 200
    assert seen == [{"user": user.id, "login": "dana@acme.com", "from": "ACTIVE", "to": "SUSPENDED",
                     "operation": "suspend", "actor": "agent"}]


def test_domain_events__delete_and_membership() -> None:
    env = build_env()
    seen: list[tuple[str, dict[str, Any]]] = []
    env.bus.subscribe("*", lambda event: seen.append((event.type, event.data)) if event.type != "call_traced" else None)
    state = env.tools["okta"].state
    user, eng = state.user("dana@acme.com"), state.groups[state.by_group_name["engineering"]]
    world_call(env, "DELETE", f"/api/v1/groups/{eng.id}/users/{user.id}")
    world_call(env, "DELETE", f"/api/v1/users/{user.id}")
    world_call(env, "DELETE", f"/api/v1/users/{user.id}")
    assert [kind for kind, _ in seen] == ["group_member_removed", "user_status_changed", "user_deleted"]
    assert seen[0][1] | {"actor": "agent"} == {"group": eng.id, "name": "Engineering", "user": user.id,
                                               "login": "dana@acme.com", "actor": "agent"}
    assert seen[2][1] == {"user": user.id, "login": "dana@acme.com", "actor": "agent"}
