"""WS /api/runs/{id}/stream: live events, replay to a late subscriber, auth, unknown runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from agentos.api.app import create_app


def ws_url(api: Any, run_id: str) -> str:
    return str(api.base_url).replace("http://", "ws://").rstrip("/") + f"/api/runs/{run_id}/stream"


def read_all(socket: Any) -> list[dict[str, Any]]:
    events = []
    try:
        while True:
            events.append(json.loads(socket.recv(timeout=10)))
    except ConnectionClosed:
        return events


def slow_nodes(delay_ms: int) -> list[dict[str, Any]]:
    return [
        {"id": "classify", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "{{input.ticket}}",
         "output": "category", "responses": [{"text": "refund", "delay_ms": delay_ms}]},
        {"id": "draft", "type": "llm", "provider": "mock", "model": "gpt-4o-mini", "prompt": "{{category}}",
         "output": "draft_reply", "responses": [{"text": "We'll process your refund today.", "delay_ms": delay_ms}]},
    ]


def test_stream__late_subscriber_gets_every_event_replayed_then_the_socket_closes(api, support_workflow):
    run = api.post("/api/workflows/Support Triage Crew/runs", json={"input": {"ticket": "refund"}}).json()
    with connect(ws_url(api, run["id"]), additional_headers={"Authorization": f"Bearer {api.key}"}) as socket:
        events = read_all(socket)
    assert [e["type"] for e in events] == [
        "run_started",
        "node_started", "node_finished",
        "node_started", "node_finished",
        "node_started", "node_finished",
        "run_finished", "run_evaluated",
    ]
    assert all(e["run_id"] == run["id"] and e["at"].endswith("Z") for e in events)
    assert events[-1]["passed"] == run["evals"]["passed"] and events[-1]["total"] == 6
    assert events[-2]["status"] == "success"
    classify = events[2]
    assert (classify["node_id"], classify["provider"], classify["mock"]) == ("classify", "mock", True)
    assert classify["input_tokens"] == 40 and classify["output_tokens"] == 1


def test_stream__live_subscriber_sees_events_as_they_happen_with_query_param_auth(api, support_nodes):
    api.post("/api/workflows", json={"name": "Slow", "nodes": slow_nodes(300), "checks": [
        {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}]})
    run = api.post("/api/workflows/Slow/runs", json={"input": {"ticket": "x"}, "wait": False}).json()
    with connect(ws_url(api, run["id"]) + f"?api_key={api.key}") as socket:
        first = json.loads(socket.recv(timeout=10))
        assert first["type"] == "run_started"
        midway = api.get(f"/api/runs/{run['id']}").json()
        rest = read_all(socket)
    assert midway["status"] in ("queued", "running")
    assert [e["type"] for e in rest][-2:] == ["run_finished", "run_evaluated"]
    assert rest[-1]["passed"] == 1 and rest[-1]["total"] == 1


def test_stream__run_without_checks_ends_with_run_finished(api, support_nodes):
    api.post("/api/workflows", json={"name": "Plain", "nodes": support_nodes})
    run = api.post("/api/workflows/Plain/runs", json={"input": {}}).json()
    with connect(ws_url(api, run["id"]) + f"?api_key={api.key}") as socket:
        events = read_all(socket)
    assert events[-1]["type"] == "run_finished" and "run_evaluated" not in [e["type"] for e in events]


def test_stream__run_followed_from_another_process_replays_from_the_database(
    api, support_nodes, database_url, serve_app
):
    """A second app over the same database has no live channel for the run: it replays and
    polls the persisted events until the run ends."""
    api.post("/api/workflows", json={"name": "Slow2", "nodes": slow_nodes(150)})
    run = api.post("/api/workflows/Slow2/runs", json={"input": {}, "wait": False}).json()
    with serve_app(create_app(database_url)) as other:
        url = other.url.replace("http://", "ws://") + f"/api/runs/{run['id']}/stream?api_key={api.key}"
        with connect(url) as socket:
            events = read_all(socket)
    assert [e["type"] for e in events][0] == "run_started"
    assert [e["type"] for e in events][-1] == "run_finished"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


@pytest.mark.parametrize("auth", [None, "Bearer aos_live_wrong"])
def test_stream__missing_or_unknown_key_is_refused(api, support_workflow, auth):
    run = api.post("/api/workflows/Support Triage Crew/runs", json={"input": {}}).json()
    headers = {"Authorization": auth} if auth else {}
    with connect(ws_url(api, run["id"]), additional_headers=headers) as socket:
        message = json.loads(socket.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert "detail" in message
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


def test_stream__another_workspaces_run_is_not_found(new_api, support_nodes):
    alice, bob = new_api(), new_api()
    alice.post("/api/workflows", json={"name": "Mine", "nodes": support_nodes})
    run = alice.post("/api/workflows/Mine/runs", json={"input": {}}).json()
    with connect(ws_url(bob, run["id"]) + f"?api_key={bob.key}") as socket:
        message = json.loads(socket.recv(timeout=10))
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=10)
    assert message == {"detail": f"Run '{run['id']}' not found"}
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
