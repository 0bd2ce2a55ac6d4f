"""The blocking client against a real server: workflows, checks, runs and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import (
    AgentOS,
    AgentOSError,
    APIConnectionError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    ValidationError,
)

MakeWorkflow = Callable[..., dict[str, Any]]

CHECKS: list[dict[str, Any]] = [
    {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"},
    {"name": "under budget", "type": "max_cost_usd", "value": 0.05},
]


def test_create_workflow__returns_version_1_with_the_nodes(
    client: AgentOS, unique_name: Callable[[str], str], triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    name = unique_name("Create")
    workflow = client.create_workflow(name, triage_nodes(), checks=CHECKS, gate={"min_pass_rate": 0.9})

    assert len(workflow["id"]) == 12
    assert workflow["name"] == name
    assert workflow["version"] == 1
    assert workflow["nodes"][0]["id"] == "draft"
    assert [c["name"] for c in workflow["checks"]] == ["mentions refund", "under budget"]
    assert workflow["gate"]["min_pass_rate"] == 0.9


def test_get_workflow__by_id_and_by_exact_name_with_reserved_characters(
    client: AgentOS, unique_name: Callable[[str], str], triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    name = unique_name("Crew #1: refunds & disputes? 100%")
    created = client.create_workflow(name, triage_nodes())

    assert client.get_workflow(created["id"])["id"] == created["id"]
    assert client.get_workflow(name)["id"] == created["id"]
    assert client.get_workflow(created)["name"] == name


def test_list_workflows__includes_created_ones(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    first, second = make_workflow(), make_workflow()

    ids = {w["id"] for w in client.list_workflows()}

    assert {first["id"], second["id"]} <= ids


def test_update_workflow__changes_fields_and_bumps_the_version(
    client: AgentOS, make_workflow: MakeWorkflow, triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    workflow = make_workflow()

    updated = client.update_workflow(workflow["name"], nodes=triage_nodes("A different reply."))

    assert updated["version"] == 2
    assert updated["nodes"][0]["responses"][0]["text"] == "A different reply."
    assert {v["version"] for v in client.versions(workflow["id"])} == {1, 2}


def test_delete_workflow__then_get_raises_not_found_with_the_server_detail(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow()

    client.delete_workflow(workflow["id"])

    with pytest.raises(NotFoundError) as caught:
        client.get_workflow(workflow["id"])
    assert caught.value.status_code == 404
    assert isinstance(caught.value.detail, str) and caught.value.detail
    assert str(caught.value) == caught.value.detail


def test_create_workflow__duplicate_name_raises_conflict(
    client: AgentOS, make_workflow: MakeWorkflow, triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    workflow = make_workflow()

    with pytest.raises(ConflictError) as caught:
        client.create_workflow(workflow["name"], triage_nodes())
    assert caught.value.status_code == 409
    assert str(caught.value) == caught.value.detail


def test_set_checks__replaces_the_list_with_chk_ids_and_bumps_the_version(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow(checks=[{"name": "old", "type": "contains", "target": "draft_reply", "value": "x"}])

    updated = client.set_checks(workflow["name"], CHECKS)

    assert updated["id"] == workflow["id"]
    assert updated["version"] == workflow["version"] + 1
    assert [c["name"] for c in updated["checks"]] == ["mentions refund", "under budget"]
    assert all(c["id"].startswith("chk_") for c in updated["checks"])
    assert updated["checks"][0]["case_sensitive"] is False


def test_set_checks__invalid_batch_raises_validation_error_listing_every_problem(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow(checks=CHECKS)
    bad = [
        {"type": "contains", "target": "draft_reply", "value": "x"},
        {"name": "b", "type": "looks_good"},
        {"name": "c", "type": "contains", "value": "x"},
        {"name": "d", "type": "regex", "target": "draft_reply", "value": "("},
        {"name": "e", "type": "max_cost_usd", "value": "cheap"},
        {"name": "f", "type": "expression", "value": "open('x')"},
    ]

    with pytest.raises(ValidationError) as caught:
        client.set_checks(workflow["id"], bad)

    error = caught.value
    assert error.status_code == 400
    assert str(error) == error.detail
    assert error.detail.startswith("Invalid checks: check 1: name is required; check 2: unknown type 'looks_good'")
    assert "check 6: invalid expression" in error.detail
    assert client.get_workflow(workflow["id"])["checks"] == workflow["checks"]  # none of the batch saved


def test_set_gate__stores_the_threshold(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow()

    updated = client.set_gate(workflow["name"], 0.75)

    assert updated["gate"]["min_pass_rate"] == 0.75
    assert client.set_gate(workflow["id"], None)["gate"] is None


def test_run__waits_and_carries_state_cost_and_evals(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow(checks=CHECKS)

    run = client.run(workflow["name"], input={"ticket": "double charged"})

    assert run["status"] == "success"
    assert run["workflow_id"] == workflow["id"]
    assert run["workflow_version"] == workflow["version"]
    assert run["input"] == {"ticket": "double charged"}
    assert run["state"]["draft_reply"] == "We'll process your refund today."
    assert run["error"] is None
    assert run["evals"]["passed"] == 2 and run["evals"]["total"] == 2
    assert [r["name"] for r in run["evals"]["results"]] == ["mentions refund", "under budget"]
    assert run["evals"]["results"][0]["detail"] == "'draft_reply' contains 'refund'"


def test_run__without_checks_has_no_evals(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    run = client.run(make_workflow(), input={"ticket": "hi"})

    assert run["status"] == "success"
    assert run["evals"] is None


def test_run__without_wait_returns_a_run_that_finishes(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow(checks=CHECKS)

    started = client.run(workflow["id"], input={"ticket": "hi"}, wait=False)
    assert started["status"] in {"queued", "running", "success"}

    run = client.get_run(started["id"])
    for _ in range(200):
        if run["status"] not in {"queued", "running"}:
            break
        run = client.get_run(started["id"])
    assert run["status"] == "success"
    assert run["evals"]["total"] == 2


def test_list_runs__filters_by_workflow_and_status(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow, other = make_workflow(), make_workflow()
    first = client.run(workflow, input={"ticket": "a"})
    second = client.run(workflow, input={"ticket": "b"})
    client.run(other, input={"ticket": "c"})

    runs = client.list_runs(workflow=workflow["id"])
    succeeded = client.list_runs(workflow=workflow["id"], status="success")
    failed = client.list_runs(workflow=workflow["id"], status="failed")

    assert {r["id"] for r in runs} == {first["id"], second["id"]}
    assert {r["id"] for r in succeeded} == {first["id"], second["id"]}
    assert failed == []


def test_get_run__unknown_id_raises_not_found(client: AgentOS) -> None:
    with pytest.raises(NotFoundError) as caught:
        client.get_run("000000000000")
    assert caught.value.status_code == 404
    assert isinstance(caught.value, AgentOSError)


def test_bad_key__raises_authentication_error_with_the_server_detail(agentos_server: Any) -> None:
    with AgentOS(agentos_server.url, api_key="aos_live_not-a-real-key") as stranger, pytest.raises(
        AuthenticationError
    ) as caught:
        stranger.list_workflows()
    assert caught.value.status_code == 401
    assert str(caught.value) == caught.value.detail


def test_key_sees_only_its_own_workspace(agentos_server: Any, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow()
    with AgentOS(agentos_server.url, api_key=agentos_server.new_key("elsewhere")) as outsider:
        with pytest.raises(NotFoundError):
            outsider.get_workflow(workflow["id"])
        assert workflow["id"] not in {w["id"] for w in outsider.list_workflows()}


def test_api_key__read_from_the_environment(
    agentos_server: Any, api_key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTOS_API_KEY", api_key)
    monkeypatch.setenv("AGENTOS_BASE_URL", agentos_server.url)

    with AgentOS() as sdk:
        assert isinstance(sdk.list_workflows(), list)


def test_missing_api_key__raises_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTOS_API_KEY", raising=False)

    with pytest.raises(AuthenticationError, match="AGENTOS_API_KEY"):
        AgentOS("http://127.0.0.1:9")


def test_unreachable_server__raises_connection_error() -> None:
    with AgentOS("http://127.0.0.1:9", api_key="aos_live_x", timeout=5) as sdk, pytest.raises(
        APIConnectionError
    ) as caught:
        sdk.metrics()
    assert caught.value.status_code is None
