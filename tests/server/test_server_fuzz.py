"""Hypothesis over every replica's bodies, queries, cursors, path ids and headers, and over
the control API: no request gets a 5xx, and the environment still grades afterwards."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tool_calls import EVERY_TOOL_SCENE, QUERY_NAMES, SERVED_CALLS, auth_headers

# Values that broke replicas before: superscript digits, numbers past int()'s 4,300-digit
# limit, nesting past the recursion limit, lone surrogates' UTF-8 bytes.
NASTY_TEXT = ["²", "9" * 5000, "-" + "9" * 30, "1e308", "NaN", "-1", "0", "", "\x00", "%", "../..", "null",
              "[" * 3000, "true", "next_ts:²", "1767603600.000123", "ancha-agent", "general"]


def _cursor_like() -> st.SearchStrategy[str]:
    raw = st.sampled_from(NASTY_TEXT) | st.text(max_size=30)
    prefixed = st.tuples(st.sampled_from(["next_ts:", "user:", "channel:", "cursor:v2:", ""]), raw).map("".join)
    return prefixed.map(lambda s: base64.b64encode(s.encode("utf-8", "surrogatepass")).decode()) | raw


query_values = st.sampled_from(NASTY_TEXT) | st.text(max_size=20) | _cursor_like() | st.integers().map(str)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.sampled_from(NASTY_TEXT),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=10,
)
bodies = (json_values.map(lambda v: json.dumps(v).encode())
          | st.binary(max_size=200)
          | st.sampled_from([b"[" * 5000, b'{"a":' * 3000, b"9" * 5000, b'{"text": "\\ud800"}', b"\xff\xfe"]))
content_types = st.sampled_from(["application/json", "application/json; charset=utf-8",
                                 "application/x-www-form-urlencoded", "text/plain", "multipart/form-data", "", "é/é"])
header_values = st.sampled_from(["é", "Bearer é", "Token token=é", "SSWS é", "\xff", "x" * 5000, ""]) | st.text(
    alphabet=st.characters(min_codepoint=32, max_codepoint=255), max_size=30)


@pytest.fixture(scope="module")
def client() -> Any:
    with httpx.Client(timeout=30) as shared:  # one client: each new one loads the CA bundle again
        yield shared


@pytest.fixture(scope="module")
def every_tool(ancha_server: str) -> Any:
    answer = httpx.post(ancha_server + "/envs", json={"scene": EVERY_TOOL_SCENE}, timeout=30)
    assert answer.status_code == 201, answer.text
    yield answer.json()
    httpx.delete(f"{ancha_server}/envs/{answer.json()['env_id']}")


@pytest.mark.parametrize("tool", list(SERVED_CALLS))
def test_replica__no_body_query_id_or_header_gets_a_5xx(ancha_server: str, every_tool: dict[str, Any],
                                                         client: httpx.Client, tool: str) -> None:
    credentials = every_tool["tools"][tool]

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(call=st.sampled_from(SERVED_CALLS[tool]), path_id=query_values,
           query=st.dictionaries(st.sampled_from(QUERY_NAMES), query_values, max_size=4),
           body=bodies, content_type=content_types,
           headers=st.dictionaries(st.sampled_from(["authorization", "x-custom", "accept", "from"]),
                                   header_values, max_size=2),
           authorized=st.booleans())
    def one(call: tuple[str, str], path_id: str, query: dict[str, str], body: bytes, content_type: str,
            headers: dict[str, str], authorized: bool) -> None:
        method, path = call
        sent = {**(auth_headers(tool, credentials) if authorized else {}), "content-type": content_type, **headers}
        url = credentials["url"] + path.replace("{id}", httpx.URL("", params={"x": path_id}).query.decode()[2:])
        answer = client.request(method, url, params=query, content=body,
                                headers={k: v.encode("latin-1") for k, v in sent.items()})  # type: ignore[arg-type]
        assert answer.status_code < 500 or answer.status_code == 501, (method, url[:200], answer.text[:300])

    one()
    for method, path in (("GET", "/trace"), ("GET", "/state"), ("POST", "/checks"), ("POST", "/grade")):
        answer = client.request(method, f"{ancha_server}/envs/{every_tool['env_id']}{path}")
        assert answer.status_code == 200, (path, answer.text[:300])


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(path=st.sampled_from(["", "/trace", "/state", "/records", "/checks", "/grade", "/events", "/done",
                             "/waiting", "/context"]),
       method=st.sampled_from(["GET", "POST", "DELETE"]), body=bodies,
       query=st.dictionaries(st.sampled_from(["after", "wait", "teardown", "limit"]), query_values, max_size=2),
       authorization=header_values)
def test_control_api__no_body_query_or_header_gets_a_5xx(ancha_server: str, every_tool: dict[str, Any],
                                                          client: httpx.Client, path: str,
                                                          method: str, body: bytes, query: dict[str, str],
                                                          authorization: str) -> None:
    env_id = every_tool["env_id"]
    if method == "DELETE" or query.get("teardown") is not None:  # one that may go: its own environment
        env_id = client.post(ancha_server + "/envs", json={"scene": EVERY_TOOL_SCENE}).json()["env_id"]
    answer = client.request(method, f"{ancha_server}/envs/{env_id}{path}", params=query, content=body,
                           headers={"authorization": authorization.encode("latin-1")})  # type: ignore[arg-type]
    assert answer.status_code < 500, (method, path, query, answer.text[:300])
    assert client.get(f"{ancha_server}/envs").status_code == 200
    if env_id != every_tool["env_id"]:
        client.delete(f"{ancha_server}/envs/{env_id}")
