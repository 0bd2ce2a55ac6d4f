"""How calls reach the replica: bodies, tokens, unknown and unserved methods."""

from __future__ import annotations

import json

import httpx
import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError


def test_form_body_with_token_param(slack):
    answer = slack.raw("chat.postMessage", data={"token": slack.token, "channel": "#support", "text": "form"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["message"]["text"] == "form"


def test_json_body_with_bearer_header(slack):
    answer = slack.raw("chat.postMessage", headers={"Authorization": f"Bearer {slack.token}",
                                                    "Content-Type": "application/json; charset=utf-8"},
                       content=json.dumps({"channel": "#support", "text": "json"}))
    assert answer.json()["ok"] is True and "warning" not in answer.json()


def test_json_body_without_charset_warns_like_slack(slack):
    answer = slack.raw("auth.test", headers={"Authorization": f"Bearer {slack.token}",
                                             "Content-Type": "application/json"}, content=b"{}")
    body = answer.json()
    assert body["ok"] is True and body["warning"] == "missing_charset"
    assert body["response_metadata"]["warnings"] == ["missing_charset"]


def test_get_with_query_params_and_token(slack):
    support = slack.channel("support")
    answer = slack.raw("conversations.history", "GET",
                       params={"token": slack.token, "channel": support, "limit": "1"})
    body = answer.json()
    assert body["ok"] is True and len(body["messages"]) == 1


@pytest.mark.parametrize(("content_type", "body", "code"), [
    ("application/json", b"{not json", "invalid_json"),
    ("application/json", b"[1, 2]", "json_not_object"),
    ("application/xml", b"<a/>", "invalid_post_type"),
])
def test_malformed_bodies(slack, content_type, body, code):
    answer = slack.raw("auth.test", headers={"Authorization": f"Bearer {slack.token}",
                                             "Content-Type": content_type}, content=body)
    assert answer.status_code == 200
    assert answer.json() == {"ok": False, "error": code}


def test_not_authed_without_a_token(slack):
    client = WebClient(base_url=slack.url + "/api/")
    with pytest.raises(SlackApiError) as excinfo:
        client.auth_test()
    assert excinfo.value.response["error"] == "not_authed"


def test_invalid_auth_with_another_environments_token(make_slack):
    first, second = make_slack(), make_slack()
    client = WebClient(token=first.token, base_url=second.url + "/api/")
    with pytest.raises(SlackApiError) as excinfo:
        client.auth_test()
    assert excinfo.value.response.status_code == 200
    assert excinfo.value.response["error"] == "invalid_auth"


def test_invalid_auth_with_a_made_up_token(slack):
    client = WebClient(token="xoxb-1-2-nope", base_url=slack.url + "/api/")
    with pytest.raises(SlackApiError) as excinfo:
        client.chat_postMessage(channel="#support", text="x")
    assert excinfo.value.response["error"] == "invalid_auth"


def test_unknown_method__answered_as_slack_does(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("foo.bar")
    assert excinfo.value.response.status_code == 200
    assert excinfo.value.response.data == {"ok": False, "error": "unknown_method", "req_method": "foo.bar"}


def test_unserved_vendor_method__501_coverage_gap(slack):
    with pytest.raises(SlackApiError) as excinfo:
        slack.client.api_call("apps.manifest.validate", json={"manifest": "{}"})
    assert excinfo.value.response.status_code == 501
    assert excinfo.value.response.data == {"ok": False, "error": "not_implemented",
                                           "method": "apps.manifest.validate"}
    base = slack.url.rsplit("/slack", 1)[0]
    gaps = httpx.get(base, timeout=10).json()["coverage_gaps"]
    assert {"tool": "slack", "method": "POST", "path": "/api/apps.manifest.validate", "calls": 1} in gaps


def test_paths_outside_api_are_404(slack):
    assert httpx.get(slack.url + "/index.html", timeout=10).status_code == 404
    assert httpx.post(slack.url + "/chat.postMessage", timeout=10).status_code == 404


def test_api_test__echoes_arguments_without_auth(slack):
    answer = slack.raw("api.test", data={"foo": "bar"})
    assert answer.json() == {"ok": True, "args": {"foo": "bar"}}
    failing = slack.raw("api.test", data={"error": "my_error"})
    assert failing.json()["ok"] is False and failing.json()["error"] == "my_error"


def test_trace_records_the_actor_and_failure(slack):
    slack.client.auth_test()
    with pytest.raises(SlackApiError):
        slack.client.chat_postMessage(channel="#nope", text="x")
    base = slack.url.rsplit("/slack", 1)[0]
    lines = [json.loads(line) for line in httpx.get(base + "/trace", timeout=10).text.splitlines()]
    assert [(e["actor"], e["worked"]) for e in lines[-2:]] == [("agent", True), ("agent", False)]
