"""Header and auth hygiene: the Bearer scheme is case-insensitive (documented), and every
401 and 403 says what to do about it."""

from __future__ import annotations

import json

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

HINTS = ("Authorization: Bearer", "agentos keys create")


def has_hint(detail: str) -> bool:
    return any(hint in detail for hint in HINTS)


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_auth__the_bearer_scheme_is_case_insensitive(api, service, scheme):
    response = httpx.get(f"{service.url}/api/workflows", headers={"Authorization": f"{scheme} {api.key}"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer aos_live_nope",
        "Token aos_live_nope",
        "Basic dXNlcjpwYXNz",
        "aos_live_nope",
        "Bearer caf\u00e9",
    ],
)
def test_auth__every_401_has_a_hint_and_names_the_scheme(service, authorization):
    headers = {} if authorization is None else {"Authorization": authorization.encode("latin-1")}
    for method, path in (("GET", "/api/workflows"), ("POST", "/api/workflows"), ("GET", "/api/runs")):
        response = httpx.request(method, f"{service.url}{path}", headers=headers, json={})
        assert response.status_code == 401, (authorization, path, response.text)
        detail = response.json()["detail"]
        assert has_hint(detail), detail
        assert response.headers.get("www-authenticate") == "Bearer"


def test_auth__an_unknown_key_says_how_to_get_one(service):
    response = httpx.get(f"{service.url}/api/workflows", headers={"Authorization": "Bearer aos_live_nope"})
    detail = response.json()["detail"]
    assert detail.startswith("Invalid API key") and "agentos keys create" in detail


def test_auth__another_scheme_is_named_in_the_401(service):
    response = httpx.get(f"{service.url}/api/workflows", headers={"Authorization": "Token abc"})
    assert "'Token'" in response.json()["detail"]


def test_stream_auth__a_refused_key_gets_the_hint_before_the_close(service):
    url = service.url.replace("http://", "ws://") + "/api/runs/abc/stream"
    with connect(url, additional_headers={"Authorization": "Bearer aos_live_nope"}) as socket:
        message = json.loads(socket.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert has_hint(message["detail"])
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


def test_stream__a_socket_to_an_unknown_path_is_told_where_streams_are(service):
    url = service.url.replace("http://", "ws://") + "/api/nothing/here"
    try:
        with connect(url) as socket:
            message = json.loads(socket.recv(timeout=10))
            with pytest.raises(ConnectionClosed) as closed:
                socket.recv(timeout=10)
    except InvalidStatus as refused:  # a bare 403 handshake refusal carries no hint
        pytest.fail(f"the handshake was refused with {refused.response.status_code} and no detail")
    assert "/api/runs/{run_id}/stream" in message["detail"]
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
