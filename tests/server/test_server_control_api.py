"""The control API answers bad requests with a 4xx and a message, never a 500."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCENE = {"name": "control", "world": {"slack": {"channels": [{"name": "general"}]}}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize("body, message", [
    (b"not json", "invalid environment request"),
    (b"[1, 2]", "expected a JSON object"),
    (b'{"scene": {"name": "x"}, "trial": "two"}', "'trial' must be a positive integer"),
    (b'{"scene": {"name": "x"}, "trial": 0}', "'trial' must be a positive integer"),
    (b'{"scene": {"name": "x", "bogus": 1}}', "invalid scene: scene.yaml:2: bogus: unknown field"),
    (b'{"scene": {"name": "x"}, "agent": "fast"}', "'agent' must be an object"),
])
def test_create_env__bad_bodies_get_400_with_a_reason(ancha_server: str, body: bytes, message: str) -> None:
    answer = httpx.post(ancha_server + "/envs", content=body)
    assert answer.status_code == 400
    assert message in answer.json()["error"]


def test_create_env__unknown_scene_hash_asks_for_the_scene(ancha_server: str) -> None:
    answer = httpx.post(ancha_server + "/envs", json={"scene_hash": "nope"})
    assert answer.status_code == 404
    assert answer.json()["hint"] == "send the scene itself in 'scene'"


def test_unknown_environment__404_naming_it(ancha_server: str) -> None:
    for method, path in (("GET", "/envs/env_nope"), ("GET", "/envs/env_nope/trace"),
                         ("POST", "/envs/env_nope/grade"), ("GET", "/envs/env_nope/slack/api/auth.test")):
        answer = httpx.request(method, ancha_server + path)
        assert answer.status_code == 404, path
        assert "env_nope" in answer.json()["error"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.dictionaries(st.sampled_from(["scene", "scene_hash", "trial", "agent"]), json_values, max_size=4))
def test_create_env__never_500_on_any_json_body(ancha_server: str, body: dict[str, Any]) -> None:
    answer = httpx.post(ancha_server + "/envs", json=body)
    assert answer.status_code in (201, 400, 404, 422), answer.text
    if answer.status_code == 201:
        httpx.delete(f"{ancha_server}/envs/{answer.json()['env_id']}")


def test_context__gives_the_agent_its_tools_with_the_trial_token(make_env: Any) -> None:
    context = make_env(SCENE)
    url = context["context_url"]
    mine = httpx.get(url, headers={"authorization": f"Bearer {context['trial_token']}"})
    assert mine.status_code == 200 and mine.json()["tools"]["slack"]["token"] == context["tools"]["slack"]["token"]
