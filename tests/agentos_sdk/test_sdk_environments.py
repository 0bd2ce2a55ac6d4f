"""Environments and pinned versions through both clients: run(environment=, version=),
evaluate(version=), release(version=), rollback(), and create_workflow(environments=)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import AgentOS, AsyncAgentOS, ConflictError, NotFoundError, ValidationError

MENTIONS_REFUND = {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}


def reply(version: int) -> str:
    return f"Version {version}: we'll process your refund today."


@pytest.fixture
def three_versions(
    client: AgentOS, unique_name: Callable[[str], str], triage_nodes: Callable[..., list[dict[str, Any]]]
) -> Callable[..., dict[str, Any]]:
    """three_versions(gate=...) -> a workflow declaring staging and production, at version 3
    (version N replies reply(N))."""

    def make(gate: dict[str, Any] | None = None) -> dict[str, Any]:
        workflow = client.create_workflow(unique_name("Pinned"), triage_nodes(reply(1)), checks=[MENTIONS_REFUND],
                                          gate=gate, environments=["staging", "production"])
        client.update_workflow(workflow["id"], nodes=triage_nodes(reply(2)))
        client.update_workflow(workflow["id"], nodes=triage_nodes(reply(3)))
        return workflow

    return make


def test_create_workflow__declares_environments_and_shows_what_each_runs(
    three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions()

    assert workflow["environments"] == ["staging", "production"]
    assert workflow["deployments"] == {"staging": None, "production": None}


def test_run__on_an_environment_runs_the_version_released_to_it(
    client: AgentOS, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions()

    assert client.release(workflow["id"], "production", version=2)["version"] == 2
    client.release(workflow["id"], "staging")

    production = client.run(workflow["id"], input={"ticket": "double charged"})
    assert (production["workflow_version"], production["state"]["draft_reply"]) == (2, reply(2))
    staging = client.run(workflow["id"], environment="staging")
    assert (staging["workflow_version"], staging["state"]["draft_reply"]) == (3, reply(3))
    assert client.get_workflow(workflow["id"])["deployments"] == {"staging": 3, "production": 2}


def test_run__an_explicit_version_runs_it_and_an_unknown_one_is_not_found(
    client: AgentOS, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions()

    run = client.run(workflow["name"], version=1)

    assert (run["workflow_version"], run["state"]["draft_reply"]) == (1, reply(1))
    with pytest.raises(NotFoundError) as missing:
        client.run(workflow["name"], version=7)
    assert str(missing.value) == f"Workflow '{workflow['name']}' has no version 7 (its versions are 1 to 3)"
    with pytest.raises(ValidationError):
        client.run(workflow["name"], environment="production", version=1)


def test_evaluate__a_version_that_is_not_current_gates_its_own_release(
    client: AgentOS, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions(gate={"min_pass_rate": 0.9})

    evaluation = client.evaluate(workflow["id"], dataset=[{"input": {"ticket": "a"}}], version=2)
    released = client.release(workflow["id"], version=2)

    assert evaluation["workflow_version"] == 2
    assert (released["version"], released["evaluation_id"]) == (2, evaluation["id"])


def test_rollback__goes_back_to_the_version_run_before_and_conflicts_with_none(
    client: AgentOS, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions()
    client.release(workflow["id"], version=1)
    client.release(workflow["id"], version=3)

    rollback = client.rollback(workflow["id"], "production")

    assert (rollback["version"], rollback["detail"]) == (1, "rollback of production from v3 to v1")
    assert client.run(workflow["id"])["workflow_version"] == 1
    with pytest.raises(ConflictError):
        client.rollback(workflow["id"])


def test_release__an_environment_the_workflow_does_not_declare_is_a_validation_error(
    client: AgentOS, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions()

    with pytest.raises(ValidationError) as typo:
        client.release(workflow["id"], "prodution")

    assert str(typo.value) == f"Unknown environment 'prodution': workflow '{workflow['name']}' declares staging, production"


def test_async_client__the_same_parameters(
    agentos_server: Any, api_key: str, three_versions: Callable[..., dict[str, Any]]
) -> None:
    workflow = three_versions(gate={"min_pass_rate": 0.9})

    async def scenario() -> None:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            evaluation = await sdk.evaluate(workflow["id"], dataset=[{"input": {"ticket": "a"}}], version=1)
            assert evaluation["workflow_version"] == 1
            await sdk.release(workflow["id"], "production", version=1)
            await sdk.evaluate(workflow["id"], dataset=[{"input": {"ticket": "a"}}], version=2)
            await sdk.release(workflow["id"], "production", version=2)
            assert (await sdk.run(workflow["id"], environment="production"))["workflow_version"] == 2
            assert (await sdk.run(workflow["id"], version=3))["workflow_version"] == 3
            rollback = await sdk.rollback(workflow["id"], "production")
            assert rollback["detail"] == "rollback of production from v2 to v1"
            assert (await sdk.run(workflow["id"]))["workflow_version"] == 1
            with pytest.raises(ConflictError):
                await sdk.rollback(workflow["id"], "staging")

    asyncio.run(scenario())
