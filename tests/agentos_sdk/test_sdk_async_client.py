"""AsyncAgentOS mirrors the blocking client: the same calls, awaited, against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import AsyncAgentOS, AuthenticationError, NotFoundError, ReleaseBlockedError, ValidationError

PASSING = {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}
FAILING = {"name": "mentions a date", "type": "contains", "target": "draft_reply", "value": "tomorrow"}


def test_async_client__workflow_checks_run_evaluate_release(
    agentos_server: Any, api_key: str, unique_name: Callable[[str], str],
    triage_nodes: Callable[..., list[dict[str, Any]]],
) -> None:
    name = unique_name("Async Crew")

    async def scenario() -> None:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            created = await sdk.create_workflow(name, triage_nodes())
            assert (await sdk.get_workflow(name))["id"] == created["id"]
            assert created["id"] in {w["id"] for w in await sdk.list_workflows()}

            updated = await sdk.set_checks(name, [PASSING, FAILING])
            assert updated["version"] == created["version"] + 1
            gated = await sdk.set_gate(name, 0.9)
            assert gated["gate"]["min_pass_rate"] == 0.9

            run = await sdk.run(name, input={"ticket": "double charged"})
            assert run["status"] == "success"
            assert (run["evals"]["passed"], run["evals"]["total"]) == (1, 2)
            assert (await sdk.get_run(run["id"]))["id"] == run["id"]
            assert [r["id"] for r in await sdk.list_runs(workflow=created["id"])] == [run["id"]]

            evaluation = await sdk.evaluate(name, dataset=[{"input": {"ticket": "x"}}], name="async")
            assert evaluation["status"] == "completed"
            assert (await sdk.get_evaluation(evaluation))["id"] == evaluation["id"]
            with pytest.raises(ReleaseBlockedError) as caught:
                await sdk.release(name)
            assert str(caught.value) == (
                "eval gate: check pass-rate 50.0% is below the required 90.0% — deployment blocked"
            )
            assert "total_runs" in await sdk.metrics()

            await sdk.delete_workflow(created["id"])
            with pytest.raises(NotFoundError):
                await sdk.get_workflow(created["id"])

    asyncio.run(scenario())


def test_async_client__invalid_checks_raise_validation_error(
    agentos_server: Any, api_key: str, unique_name: Callable[[str], str],
    triage_nodes: Callable[..., list[dict[str, Any]]],
) -> None:
    async def scenario() -> ValidationError:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            workflow = await sdk.create_workflow(unique_name("Async Invalid"), triage_nodes())
            try:
                await sdk.set_checks(workflow["id"], [{"name": "b", "type": "looks_good"}])
            except ValidationError as error:
                return error
        raise AssertionError("invalid checks were accepted")

    error = asyncio.run(scenario())
    assert error.status_code == 400
    assert str(error) == "Invalid checks: check 1: unknown type 'looks_good'"


def test_async_client__bad_key_raises_authentication_error(agentos_server: Any) -> None:
    async def scenario() -> None:
        async with AsyncAgentOS(agentos_server.url, api_key="aos_live_wrong") as sdk:
            await sdk.metrics()

    with pytest.raises(AuthenticationError):
        asyncio.run(scenario())
