"""Run event streams over the WebSocket, sync and async, against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import AgentOS, AsyncAgentOS, AuthenticationError, NotFoundError

MakeWorkflow = Callable[..., dict[str, Any]]

CHECKS = [
    {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"},
    {"name": "mentions a date", "type": "contains", "target": "draft_reply", "value": "tomorrow"},
]


def test_stream__replays_a_finished_run_from_start_to_evaluation(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    run = client.run(make_workflow(checks=CHECKS), input={"ticket": "double charged"})

    events = list(client.stream(run["id"]))

    kinds = [e["type"] for e in events]
    assert kinds == ["run_started", "node_started", "node_finished", "run_finished", "run_evaluated"]
    evaluated = events[-1]
    assert evaluated["passed"] == 1 and evaluated["total"] == 2


def test_stream__follows_a_run_started_without_waiting(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    run = client.run(make_workflow(), input={"ticket": "hi"}, wait=False)

    kinds = [e["type"] for e in client.stream(run)]

    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"  # no checks: no run_evaluated
    assert client.get_run(run["id"])["status"] == "success"


def test_stream__unknown_run_raises_not_found(client: AgentOS) -> None:
    with pytest.raises(NotFoundError) as caught:
        list(client.stream("000000000000"))
    assert caught.value.status_code == 404
    assert str(caught.value) == caught.value.detail == "Run '000000000000' not found"


def test_stream__bad_key_raises_authentication_error(
    agentos_server: Any, client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    run = client.run(make_workflow(), input={"ticket": "hi"})

    with AgentOS(agentos_server.url, api_key="aos_live_wrong") as stranger:
        with pytest.raises(AuthenticationError) as over_http:
            stranger.get_run(run["id"])
        with pytest.raises(AuthenticationError) as over_stream:
            list(stranger.stream(run["id"]))
    assert over_stream.value.status_code == 401
    assert str(over_stream.value) == over_http.value.detail  # the same server detail either way


def test_stream__breaking_out_early_closes_cleanly(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    run = client.run(make_workflow(checks=CHECKS), input={"ticket": "hi"})

    for event in client.stream(run["id"]):
        assert event["type"] == "run_started"
        break

    assert client.get_run(run["id"])["status"] == "success"  # the client still works


def test_async_stream__yields_the_same_events(
    agentos_server: Any, api_key: str, client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    run = client.run(make_workflow(checks=CHECKS), input={"ticket": "double charged"})

    async def collect() -> list[dict[str, Any]]:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            return [event async for event in sdk.stream(run["id"])]

    events = asyncio.run(collect())

    assert [e["type"] for e in events] == [e["type"] for e in client.stream(run["id"])]
    assert events[-1] == {**events[-1], "type": "run_evaluated", "passed": 1, "total": 2}


def test_async_stream__unknown_run_raises_not_found(agentos_server: Any, api_key: str) -> None:
    async def consume() -> None:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            async for _ in sdk.stream("000000000000"):
                pass

    with pytest.raises(NotFoundError, match="^Run '000000000000' not found$"):
        asyncio.run(consume())
