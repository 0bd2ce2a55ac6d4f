"""Evaluations, comparisons, the release gate and metrics through the blocking client."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from agentos_sdk import AgentOS, ReleaseBlockedError, ValidationError

MakeWorkflow = Callable[..., dict[str, Any]]

PASSING = {"name": "mentions refund", "type": "contains", "target": "draft_reply", "value": "refund"}
FAILING = {"name": "mentions a date", "type": "contains", "target": "draft_reply", "value": "tomorrow"}
DATASET = [{"input": {"ticket": "double charged"}}, {"input": {"ticket": "refund please"}}]
GATE_BLOCKED = re.compile(
    r"^eval gate: check pass-rate \d+\.\d% is below the required \d+\.\d% — deployment blocked$"
)


def test_evaluate__runs_every_item_and_reports_the_pass_rate(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow(checks=[PASSING, FAILING])

    evaluation = client.evaluate(workflow["name"], dataset=DATASET, name="baseline")

    assert evaluation["status"] == "completed"
    assert evaluation["name"] == "baseline"
    assert evaluation["check_pass_rate"] == 0.5
    assert evaluation["success_rate"] == 1.0
    assert [c["pass_rate"] for c in evaluation["per_check"]] == [1.0, 0.0]
    assert client.get_evaluation(evaluation["id"])["id"] == evaluation["id"]
    assert evaluation["id"] in {e["id"] for e in client.evaluations(workflow["id"])}


def test_evaluate__scorers_grade_each_item_against_its_expected_output(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow(reply="Your refund is on its way.", checks=[PASSING])
    dataset = [dict(item, expected={"draft_reply": "your refund is on its way."}) for item in DATASET]

    evaluation = client.evaluate(workflow["id"], dataset, "scored",
                                 scorers=[{"name": "reply", "type": "exact", "target": "draft_reply"}])

    assert evaluation["scores"] == [{"name": "reply", "type": "exact", "mean": 1.0, "passed": 2, "total": 2}]
    assert [item["scores"][0]["passed"] for item in evaluation["items"]] == [True, True]


def test_evaluate__without_a_name_gets_a_timestamped_one(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    evaluation = client.evaluate(make_workflow(checks=[PASSING]), DATASET)

    assert evaluation["status"] == "completed"
    assert re.fullmatch(r"evaluation \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", evaluation["name"])


def test_evaluate__needs_a_dataset_or_results() -> None:
    with AgentOS("http://127.0.0.1:9", api_key="aos_live_x") as sdk, pytest.raises(ValueError):
        sdk.evaluate("anything")


def test_compare__reports_the_regressed_check(
    client: AgentOS, make_workflow: MakeWorkflow, triage_nodes: Callable[..., list[dict[str, Any]]]
) -> None:
    workflow = make_workflow(checks=[PASSING, FAILING])
    before = client.evaluate(workflow["id"], dataset=DATASET, name="before")
    client.update_workflow(workflow["id"], nodes=triage_nodes("We'll look into it."))
    after = client.evaluate(workflow["id"], dataset=DATASET, name="after")

    comparison = client.compare(before["id"], after["id"])

    assert comparison["base"]["id"] == before["id"] and comparison["candidate"]["id"] == after["id"]
    assert comparison["regressions"] == 2 and comparison["improvements"] == 0
    assert [row["regressed"] for row in comparison["items"]] == [["mentions refund"], ["mentions refund"]]


def test_release__blocked_by_the_gate_raises_release_blocked_with_the_reference_detail(
    client: AgentOS, make_workflow: MakeWorkflow
) -> None:
    workflow = make_workflow(checks=[PASSING, FAILING], gate={"min_pass_rate": 0.9})
    client.evaluate(workflow["id"], dataset=DATASET, name="candidate")

    with pytest.raises(ReleaseBlockedError) as caught:
        client.release(workflow["name"], environment="production")

    error = caught.value
    assert isinstance(error, ValidationError)
    assert error.status_code == 422
    assert str(error) == error.detail
    assert error.detail == "eval gate: check pass-rate 50.0% is below the required 90.0% — deployment blocked"
    assert GATE_BLOCKED.match(error.detail)
    attempts = client.releases(workflow["id"])
    assert [(r["status"], r["detail"]) for r in attempts] == [("blocked", error.detail)]


def test_release__gate_without_an_evaluation_is_blocked(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow(checks=[PASSING], gate={"min_pass_rate": 0.9})

    with pytest.raises(ReleaseBlockedError) as caught:
        client.release(workflow["id"])
    assert caught.value.status_code == 422
    assert caught.value.detail.startswith("eval gate:")


def test_release__passing_the_gate_records_a_release(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    workflow = make_workflow(checks=[PASSING], gate={"min_pass_rate": 0.9})
    evaluation = client.evaluate(workflow["id"], dataset=DATASET, name="good")

    release = client.release(workflow["id"])

    assert release["environment"] == "production"
    assert release["version"] == workflow["version"]
    assert release["evaluation_id"] == evaluation["id"]
    assert release["id"] in {r["id"] for r in client.releases(workflow["name"])}


def test_release__to_a_named_environment_without_a_gate(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    release = client.release(make_workflow(), environment="staging")

    assert release["environment"] == "staging"


def test_metrics__reports_the_reference_fields(client: AgentOS, make_workflow: MakeWorkflow) -> None:
    client.run(make_workflow(checks=[PASSING, FAILING]), input={"ticket": "double charged"})

    metrics = client.metrics()

    for field in ("total_runs", "success_rate", "total_cost_usd", "active_workflows", "runs_by_day",
                  "eval_pass_rate", "evaluated_runs"):
        assert field in metrics
    assert metrics["total_runs"] >= 1
    assert metrics["evaluated_runs"] >= 1
