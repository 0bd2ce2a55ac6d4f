"""Every token, key and secret the world hands out belongs to one environment: two
environments of the same scene (and the same trial number, so the same seeded RNG) share
none, and each refuses the other's with its vendor's auth error."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from tool_calls import EVERY_TOOL_SCENE, auth_headers

SCENE: dict[str, Any] = {
    "name": "two-of-a-kind",
    "world": {
        "slack": EVERY_TOOL_SCENE["world"]["slack"],
        "github": {},
        "datadog": {},
        "pagerduty": {
            "escalation_policies": [{"ref": "pd_policy", "name": "Default",
                                     "rules": [{"delay": 900.0, "targets": ["pagerduty_agent"]}]}],
            "services": [{"ref": "pd_orders", "name": "orders", "escalation_policy": "pd_policy"},
                         {"ref": "pd_billing", "name": "billing", "escalation_policy": "pd_policy"}],
        },
        "okta": {},
    },
}

NOT_SECRET = {"url", "login", "team_id", "bot_user_id", "from_email"}
"""What the control API hands out beside the credentials: where and who, not how to get in."""


def _handed_out_later(context: dict[str, Any]) -> dict[str, str]:
    """Credentials the world hands out through its APIs, as an agent would get them."""
    found: dict[str, str] = {}
    with httpx.Client(timeout=30, verify=False) as client:
        okta = context["tools"]["okta"]
        user = client.post(okta["url"] + "/api/v1/users?activate=false", headers=auth_headers("okta", okta), json={
            "profile": {"firstName": "Ada", "lastName": "L", "email": "ada@acme.test", "login": "ada@acme.test"}})
        assert user.status_code == 200, user.text
        user_id = user.json()["id"]
        activated = client.post(f"{okta['url']}/api/v1/users/{user_id}/lifecycle/activate?sendEmail=false",
                                headers=auth_headers("okta", okta))
        assert activated.status_code == 200, activated.text
        found["okta.activationToken"] = activated.json()["activationToken"]
        reset = client.post(f"{okta['url']}/api/v1/users/{user_id}/lifecycle/reset_password?sendEmail=false",
                            headers=auth_headers("okta", okta))
        assert reset.status_code == 200, reset.text
        found["okta.resetPasswordUrl"] = reset.json()["resetPasswordUrl"].rsplit("/", 1)[-1]
        slack = context["tools"]["slack"]
        upload = client.post(slack["url"] + "/api/files.getUploadURLExternal", headers=auth_headers("slack", slack),
                             data={"filename": "a.txt", "length": "1"})
        assert upload.json()["ok"] is True, upload.text
        found["slack.upload_url"] = upload.json()["upload_url"].rsplit("/", 1)[-1]
        link = client.post(slack["url"] + "/api/apps.connections.open",
                           headers={"authorization": f"Bearer {slack['app_token']}"})
        assert link.json()["ok"] is True, link.text
        found["slack.socket_mode_ticket"] = httpx.URL(link.json()["url"]).params["ticket"]
    return found


def _credentials(context: dict[str, Any]) -> dict[str, str]:
    """Every credential of an environment, by name: the control API's, then the APIs'."""
    found: dict[str, str] = {"events.token": context["events"]["token"], "trial_token": context["trial_token"]}
    for tool, values in context["tools"].items():
        for name, value in values.items():
            if name in NOT_SECRET:
                continue
            for n, part in enumerate(value.split(",") if name == "routing_keys" else [value]):
                found[f"{tool}.{name}.{n}"] = part
    assert all(found.values()), found  # none empty: every service has its routing key
    return found | _handed_out_later(context)


@pytest.fixture
def two(make_env: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return make_env(SCENE, trial=1), make_env(SCENE, trial=1)


def test_two_environments_of_one_scene__share_no_credential(two: tuple[dict[str, Any], dict[str, Any]]) -> None:
    a, b = (_credentials(context) for context in two)
    assert len(a) >= 20
    shared = {name: value for name, value in a.items() if value in set(b.values())}
    assert shared == {}


def test_a_credential_of_one_environment__is_refused_by_the_other(two: tuple[dict[str, Any], dict[str, Any]]) -> None:
    a, b = two
    tools_a, tools_b = a["tools"], b["tools"]
    with httpx.Client(timeout=30, verify=False) as client:
        slack = tools_b["slack"]["url"]
        for token in (tools_a["slack"]["token"], tools_a["slack"]["app_token"]):
            answer = client.post(slack + "/api/auth.test", headers={"authorization": f"Bearer {token}"})
            assert answer.json() == {"ok": False, "error": "invalid_auth"}, answer.text
        answer = client.post(slack + "/api/apps.connections.open",
                             headers={"authorization": f"Bearer {tools_a['slack']['app_token']}"})
        assert answer.json() == {"ok": False, "error": "invalid_auth"}, answer.text

        answer = client.get(tools_b["github"]["url"] + "/user", headers=auth_headers("github", tools_a["github"]))
        assert answer.status_code == 401 and answer.json()["message"] == "Bad credentials", answer.text

        datadog = tools_b["datadog"]["url"]
        answer = client.get(datadog + "/api/v1/validate", headers={"dd-api-key": tools_a["datadog"]["api_key"]})
        assert answer.status_code == 403 and answer.json()["errors"], answer.text
        answer = client.get(datadog + "/api/v1/monitor", headers={"dd-api-key": tools_b["datadog"]["api_key"],
                                                                  "dd-application-key": tools_a["datadog"]["app_key"]})
        assert answer.status_code == 403 and answer.json()["errors"], answer.text

        pagerduty = tools_b["pagerduty"]["url"]
        answer = client.get(pagerduty + "/incidents", headers=auth_headers("pagerduty", tools_a["pagerduty"]))
        assert answer.status_code == 401 and answer.json()["error"]["code"] == 2006, answer.text
        for key in tools_a["pagerduty"]["routing_keys"].split(","):
            answer = client.post(pagerduty + "/v2/enqueue", json={
                "routing_key": key, "event_action": "trigger",
                "payload": {"summary": "from another trial", "source": "a", "severity": "critical"}})
            assert answer.status_code == 400, answer.text
            assert answer.json()["status"] == "invalid event" and "Invalid routing key" in answer.json()["errors"]
        incidents = client.get(pagerduty + "/incidents", headers=auth_headers("pagerduty", tools_b["pagerduty"]))
        assert incidents.json()["incidents"] == []

        answer = client.get(tools_b["okta"]["url"] + "/api/v1/users", headers=auth_headers("okta", tools_a["okta"]))
        assert answer.status_code == 401 and answer.json()["errorCode"] == "E0000011", answer.text

        answer = client.get(b["events"]["url"], headers={"authorization": f"Bearer {a['events']['token']}"})
        assert answer.status_code == 401, answer.text
        answer = client.post(b["done_url"], headers={"authorization": f"Bearer {a['trial_token']}"})
        assert answer.status_code == 401, answer.text
