"""GET /api/metrics: pass rate, cost and latency by day, workflow, check and model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agentos.rollups import bucket_middle, latency_bucket


def _run(api: Any, workflow: str, ticket: str) -> dict[str, Any]:
    response = api.post(f"/api/workflows/{workflow}/runs", json={"input": {"ticket": ticket}})
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


def test_metrics_by_workflow__counts_rates_cost_and_latency(api, support_workflow):
    runs = [_run(api, "Support Triage Crew", t) for t in ("refund", "refund", "crash")]
    api.post("/api/workflows", json={"name": "Broken", "nodes": [{"id": "x", "type": "set", "values": {"y": "nope"}}]})
    _run(api, "Broken", "x")

    groups = {g["key"]: g for g in api.get("/api/metrics", params={"group_by": "workflow"}).json()["groups"]}
    assert set(groups) == {"Support Triage Crew", "Broken"}
    support = groups["Support Triage Crew"]
    assert (support["runs"], support["success_rate"]) == (3, 100.0)
    assert (support["checks_passed"], support["checks_total"]) == (13, 18)
    assert support["pass_rate"] == 72.2
    assert support["cost_usd"] == round(sum(r["cost_usd"] for r in runs), 5)
    durations = sorted(r["duration_ms"] for r in runs)  # read back from their buckets (exact below 32 ms)
    assert support["latency_p50_ms"] == bucket_middle(latency_bucket(durations[1]))
    assert support["latency_p95_ms"] == bucket_middle(latency_bucket(durations[2]))
    assert (groups["Broken"]["runs"], groups["Broken"]["success_rate"], groups["Broken"]["checks_total"]) == (1, 0.0, 0)


def test_metrics_by_day__today_holds_the_runs(api, support_workflow):
    _run(api, "Support Triage Crew", "refund")
    body = api.get("/api/metrics").json()
    assert body["group_by"] == "day" and body["days"] == 30
    assert [(g["key"], g["runs"]) for g in body["groups"]] == [(datetime.now(UTC).date().isoformat(), 1)]


def test_metrics_by_check__each_check_has_its_own_pass_rate(api, support_workflow):
    for ticket in ("refund", "crash"):
        _run(api, "Support Triage Crew", ticket)
    groups = {g["key"]: g for g in api.get("/api/metrics", params={"group_by": "check"}).json()["groups"]}
    assert groups["No internal error leaked"]["pass_rate"] == 50.0
    assert groups["Category is known"]["pass_rate"] == 100.0
    only = api.get("/api/metrics", params={"group_by": "workflow", "check": "No internal error leaked"}).json()
    assert [(g["checks_passed"], g["checks_total"]) for g in only["groups"]] == [(1, 2)]


def test_metrics_by_model__runs_count_under_their_llm_nodes_model(api, support_workflow):
    _run(api, "Support Triage Crew", "refund")
    groups = api.get("/api/metrics", params={"group_by": "model"}).json()["groups"]
    assert [(g["key"], g["runs"]) for g in groups] == [("gpt-4o-mini", 1)]
    assert api.get("/api/metrics", params={"model": "claude-x"}).json()["groups"] == []
    assert api.get("/api/metrics", params={"model": "gpt-4o-mini"}).json()["groups"][0]["runs"] == 1


def test_metrics__bad_parameters_are_422_naming_them(api, support_workflow):
    for params, place in (({"group_by": "hour"}, "group_by"), ({"days": 0}, "days")):
        response = api.get("/api/metrics", params=params)
        assert response.status_code == 422 and place in response.text, response.text
    assert api.get("/api/metrics", params={"workflow": "Nope"}).status_code == 404
