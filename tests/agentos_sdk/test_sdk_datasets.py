"""Stored datasets through both clients: created by hand or from runs, versioned, and named by
evaluations instead of an inline list."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import AgentOS, AsyncAgentOS, ConflictError, NotFoundError, ValidationError

MakeWorkflow = Callable[..., dict[str, Any]]
EXACT = {"name": "reply", "type": "exact", "target": "draft_reply"}


def test_add_run_to_dataset__then_evaluate_the_stored_dataset_with_scorers(
    client: AgentOS, make_workflow: MakeWorkflow, unique_name: Callable[[str], str]
) -> None:
    workflow = make_workflow(reply="Refund sent.")
    name = unique_name("from-prod").replace(" ", "-")
    good = client.run(workflow["name"], input={"ticket": "refund please"})
    bad = client.run(workflow["name"], input={"ticket": "where is my parcel"})

    added = client.add_run_to_dataset(good, name, expected={"draft_reply": "refund sent."}, item="refund")
    assert (added["dataset"], added["version"]) == (name, 1)
    assert added["item"] | {"id": None, "created_at": None} == {
        "id": None, "item": "refund", "input": {"ticket": "refund please"},
        "expected": {"draft_reply": "refund sent."}, "source_run_id": good["id"], "added_in_version": 1,
        "created_at": None}
    corrected = client.add_run_to_dataset(bad["id"], name, expected={"draft_reply": "It ships tomorrow."})
    assert corrected["version"] == 2
    unlabelled = client.add_run_to_dataset(bad["id"], name)
    assert "expected" not in unlabelled["item"]
    client.remove_dataset_item(name, unlabelled["item"])

    evaluation = client.evaluate(workflow["name"], dataset=name, name="stored", scorers=[EXACT])
    assert evaluation["dataset"] == {"name": name, "version": 4}
    assert evaluation["scores"] == [{"name": "reply", "type": "exact", "mean": 0.5, "passed": 1, "total": 2}]
    old = client.evaluate(workflow["id"], dataset={"name": name, "version": 1}, name="old", scorers=[EXACT])
    assert [item["item"] for item in old["items"]] == ["refund"]


def test_datasets__create_list_get_at_a_version_add_and_remove(
    client: AgentOS, unique_name: Callable[[str], str]
) -> None:
    name = unique_name("qa").replace(" ", "-")
    created = client.create_dataset(name, [{"item": "a", "input": {"ticket": "a"}, "expected": "A"}])
    assert (created["name"], created["version"], [i["item"] for i in created["items"]]) == (name, 1, ["a"])
    assert client.add_dataset_items(created, [{"item": "b", "input": {"ticket": "b"}}])["version"] == 2
    client.remove_dataset_item(name, created["items"][0]["id"])
    assert [i["item"] for i in client.get_dataset(name)["items"]] == ["b"]
    assert [i["item"] for i in client.get_dataset(name, version=2)["items"]] == ["a", "b"]
    assert {"name": name, "version": 3, "items": 1}.items() <= next(
        d for d in client.list_datasets() if d["name"] == name).items()
    with pytest.raises(ConflictError, match="already exists"):
        client.create_dataset(name)
    with pytest.raises(NotFoundError, match="has no version 9"):
        client.get_dataset(name, version=9)
    with pytest.raises(ValidationError, match="unknown field 'expectd'"):
        client.add_dataset_items(name, [{"input": {}, "expectd": 1}])
    with pytest.raises(NotFoundError, match="Run '000000000000' not found"):
        client.add_run_to_dataset("000000000000", name)


def test_async_client__datasets_mirror_the_blocking_client(
    agentos_server: Any, api_key: str, unique_name: Callable[[str], str],
    triage_nodes: Callable[..., list[dict[str, Any]]],
) -> None:
    workflow_name = unique_name("Async datasets")
    name = unique_name("async").replace(" ", "-")

    async def scenario() -> None:
        async with AsyncAgentOS(agentos_server.url, api_key=api_key) as sdk:
            await sdk.create_workflow(workflow_name, triage_nodes("Done."))
            run = await sdk.run(workflow_name, input={"ticket": "t"})
            added = await sdk.add_run_to_dataset(run, name, expected=None)
            assert added["item"]["expected"] is None, "None is sent as an expected value"
            created = await sdk.add_dataset_items(name, [{"item": "second", "input": {"ticket": "u"}}])
            assert created["version"] == 2
            assert name in {d["name"] for d in await sdk.list_datasets()}
            removed = await sdk.remove_dataset_item(name, created["items"][0]["id"])
            assert removed["version"] == 3
            assert len((await sdk.get_dataset(name, version=2))["items"]) == 2
            evaluation = await sdk.evaluate(workflow_name, dataset=name, name="async stored")
            assert (evaluation["dataset"], evaluation["items_total"]) == ({"name": name, "version": 3}, 1)
            other = unique_name("made").replace(" ", "-")
            assert (await sdk.create_dataset(other))["version"] == 1
            with pytest.raises(ValidationError, match="has no items at version 1"):
                await sdk.evaluate(workflow_name, dataset=other, name="empty")

    asyncio.run(scenario())
