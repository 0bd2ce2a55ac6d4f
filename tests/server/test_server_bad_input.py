"""Whatever a client sends (a body, a parameter, a header), every replica and the control
API answer with a 4xx in their own shape, never a 500, and the environment's trace,
grading and state keep working afterwards."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from tool_calls import EVERY_TOOL_SCENE, JSON_WRITES, auth_headers, vendor_shaped

from ancha.server.embedded import EmbeddedServer

DEEP_ARRAY = b"[" * 10_000 + b"]" * 10_000
DEEP_OBJECT = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
JUST_UNDER_PYTHONS_LIMIT = b"[" * 900 + b"]" * 900


@pytest.fixture
def every_tool(make_env: Any) -> dict[str, Any]:
    return make_env(EVERY_TOOL_SCENE)


def _still_works(base: str, env_id: str) -> None:
    for method, path in (("GET", "/trace"), ("GET", "/state"), ("GET", "/records"), ("POST", "/grade")):
        answer = httpx.request(method, f"{base}/envs/{env_id}{path}", timeout=30)
        assert answer.status_code == 200, (path, answer.text[:300])
    listing = httpx.get(f"{base}/envs", timeout=30)
    assert listing.status_code == 200


@pytest.mark.parametrize("body", [DEEP_ARRAY, DEEP_OBJECT, JUST_UNDER_PYTHONS_LIMIT], ids=["array", "object", "900"])
def test_deep_json_body__every_replica_answers_its_own_error_and_grading_still_works(
        ancha_server: str, every_tool: dict[str, Any], body: bytes) -> None:
    for tool, calls in JSON_WRITES.items():
        credentials = every_tool["tools"][tool]
        for method, path in calls:
            answer = httpx.request(method, credentials["url"] + path, content=body, timeout=30,
                                   headers={**auth_headers(tool, credentials), "content-type": "application/json"})
            assert answer.status_code < 500, (tool, method, path, answer.text[:200])
            assert vendor_shaped(tool, answer.json()), (tool, path, answer.text[:200])
            if tool != "slack":  # Slack answers its errors with 200 and ok: false
                assert 400 <= answer.status_code < 500, (tool, path, answer.status_code)
    _still_works(ancha_server, every_tool["env_id"])


def test_deep_json_in_a_form_field__slack_refuses_it(ancha_server: str, every_tool: dict[str, Any]) -> None:
    slack = every_tool["tools"]["slack"]
    answer = httpx.post(slack["url"] + "/api/chat.postMessage", timeout=30,
                        data={"channel": "general", "text": "hi", "blocks": DEEP_ARRAY.decode()},
                        headers=auth_headers("slack", slack))
    assert answer.status_code == 200 and answer.json()["ok"] is False
    _still_works(ancha_server, every_tool["env_id"])


@pytest.mark.parametrize("decoded", ["next_ts:²", "next_ts:" + "9" * 5000, "next_ts:-1", "next_ts:", "user:U1",
                                     "next_ts:1767603600.5", "next_ts:٣"])
def test_slack_history_and_replies__a_bad_cursor_is_invalid_cursor(ancha_server: str, every_tool: dict[str, Any],
                                                                     decoded: str) -> None:
    slack = every_tool["tools"]["slack"]
    headers = auth_headers("slack", slack)
    channel = httpx.get(slack["url"] + "/api/conversations.list", headers=headers).json()["channels"][0]["id"]
    history = httpx.get(slack["url"] + "/api/conversations.history", params={"channel": channel}, headers=headers)
    root = history.json()["messages"][-1]["ts"]
    cursor = base64.b64encode(decoded.encode()).decode()
    for method, extra in (("conversations.history", {}), ("conversations.replies", {"ts": root})):
        answer = httpx.post(slack["url"] + "/api/" + method, data={"channel": channel, "cursor": cursor, **extra},
                            headers=headers)
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"ok": False, "error": "invalid_cursor"}
    _still_works(ancha_server, every_tool["env_id"])


@pytest.fixture(scope="module")
def keyed_server() -> Iterator[str]:
    with EmbeddedServer(key="the-server-key") as server:
        yield server.url


@pytest.mark.parametrize("authorization", ["Bearer é", "Bearer ключ", "é", "Bearer \xff\xfe"])
def test_control_endpoints__non_ascii_authorization_is_a_401(keyed_server: str, authorization: str) -> None:
    key = {"authorization": "Bearer the-server-key"}
    created = httpx.post(keyed_server + "/envs", json={"scene": EVERY_TOOL_SCENE}, headers=key)
    assert created.status_code == 201, created.text
    env_id = created.json()["env_id"]
    bad = {"authorization": authorization.encode("utf-8")}
    for method, path in (("POST", "/envs"), ("GET", "/envs"), ("GET", f"/envs/{env_id}"),
                         ("GET", f"/envs/{env_id}/trace"), ("GET", f"/envs/{env_id}/state"),
                         ("GET", f"/envs/{env_id}/records"), ("POST", f"/envs/{env_id}/checks"),
                         ("POST", f"/envs/{env_id}/grade"), ("GET", f"/envs/{env_id}/events"),
                         ("POST", f"/envs/{env_id}/done"), ("POST", f"/envs/{env_id}/waiting"),
                         ("GET", f"/envs/{env_id}/context")):
        answer = httpx.request(method, keyed_server + path, headers=bad)  # type: ignore[arg-type]
        assert answer.status_code == 401, (path, answer.status_code, answer.text[:200])
        assert "error" in answer.json()
    assert httpx.post(f"{keyed_server}/envs/{env_id}/grade", headers=key).status_code == 200
    assert httpx.delete(f"{keyed_server}/envs/{env_id}", headers=key).status_code == 204


# --- environment settings (class 2) ----------------------------------------------------


@pytest.mark.parametrize("settings", [
    {"clock": {"speed": math.nan}}, {"clock": {"speed": math.inf}}, {"clock": {"speed": 1e308}},
    {"clock": {"speed": 0}}, {"clock": {"speed": -1}},
    {"clock": {"limit": math.nan}}, {"clock": {"limit": math.inf}}, {"clock": {"limit": 1e308}},
    {"clock": {"limit": -5}},
    {"clock": {"start": "9999-12-31T00:00:00Z"}}, {"clock": {"start": "0001-01-01T00:00:00Z"}},
    {"clock": {"start": "2200-12-31T23:00:00Z", "limit": 86400}},
    {"agent": {"idle": math.nan}}, {"agent": {"idle": math.inf}}, {"agent": {"idle": 1e308}},
    {"agent": {"idle": -1}}, {"agent": {"idle": "forever"}}, {"agent": {"idle": [1]}}, {"agent": {"idle": True}},
    {"agent": {"idle": 10**400}},
], ids=lambda s: json.dumps(s, allow_nan=True))
def test_create_env__settings_out_of_range_are_a_400_and_nothing_is_registered(
        ancha_server: str, settings: dict[str, Any]) -> None:
    scene = {**EVERY_TOOL_SCENE, "clock": settings.get("clock", {})}
    body: dict[str, Any] = {"scene": scene}
    if "agent" in settings:
        body["agent"] = settings["agent"]
    before = {e["env_id"] for e in httpx.get(ancha_server + "/envs").json()["envs"]}
    answer = httpx.post(ancha_server + "/envs", content=json.dumps(body, allow_nan=True),
                        headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    setting = next(iter(settings)) + "." + next(iter(next(iter(settings.values()))))
    assert setting in answer.json()["error"]
    listing = httpx.get(ancha_server + "/envs")
    assert listing.status_code == 200
    assert {e["env_id"] for e in listing.json()["envs"]} <= before


def test_create_env__settings_in_range_still_build(ancha_server: str) -> None:
    body = {"scene": {**EVERY_TOOL_SCENE, "clock": {"speed": 60, "limit": 86400, "start": "2030-06-01T00:00:00Z"}},
            "agent": {"idle": "30s"}}
    answer = httpx.post(ancha_server + "/envs", json=body)
    assert answer.status_code == 201, answer.text
    assert httpx.get(ancha_server + "/envs").status_code == 200
    httpx.delete(f"{ancha_server}/envs/{answer.json()['env_id']}")


# --- body size ------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["slack", "github", "datadog", "pagerduty", "okta"])
def test_oversized_body__each_vendor_answers_its_own_413_and_the_env_still_works(
        ancha_server: str, every_tool: dict[str, Any], tool: str) -> None:
    from ancha.world.registry import registry

    credentials = every_tool["tools"][tool]
    method, path = JSON_WRITES[tool][0]
    too_big = b" " * (registry().tools[tool].max_body + 1)
    answer = httpx.request(method, credentials["url"] + path, content=too_big, timeout=60,
                           headers={**auth_headers(tool, credentials), "content-type": "application/json"})
    assert answer.status_code == 413, answer.text[:200]
    assert vendor_shaped(tool, answer.json()), answer.text[:200]
    _still_works(ancha_server, every_tool["env_id"])
