"""GET /api/dashboard/metrics: the reference's shape, over the key's workspace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest


def test_metrics__shape_and_numbers(api, support_workflow):
    empty = api.get("/api/dashboard/metrics").json()
    assert set(empty) == {"total_runs", "success_rate", "total_cost_usd", "active_workflows", "runs_by_day",
                          "eval_pass_rate", "evaluated_runs"}
    assert (empty["total_runs"], empty["success_rate"], empty["eval_pass_rate"]) == (0, 0.0, 0.0)

    runs = [api.post("/api/workflows/Support Triage Crew/runs", json={"input": {"ticket": t}}).json()
            for t in ("refund", "refund", "crash")]
    api.post("/api/workflows", json={"name": "Broken", "nodes": [{"id": "x", "type": "set",
                                                                   "values": {"y": "nope"}}]})
    api.post("/api/workflows/Broken/runs", json={"input": {}})

    metrics = api.get("/api/dashboard/metrics").json()
    assert metrics["total_runs"] == 4
    assert metrics["success_rate"] == 75.0
    assert metrics["active_workflows"] == 2
    assert metrics["evaluated_runs"] == 3
    # 5 + 5 + 3 of 18 checks
    assert metrics["eval_pass_rate"] == round(100 * 13 / 18, 1) == 72.2
    assert metrics["total_cost_usd"] == round(sum(r["cost_usd"] for r in runs), 5)
    days = metrics["runs_by_day"]
    assert len(days) == 30 and all(set(d) == {"date", "count", "cost_usd"} for d in days)
    today = datetime.now(UTC).date()
    assert days[-1]["date"] == today.isoformat()
    assert days[0]["date"] == (today - timedelta(days=29)).isoformat()
    assert days[-1]["count"] == 4 and sum(d["count"] for d in days) == 4
    assert days[-1]["cost_usd"] == pytest.approx(metrics["total_cost_usd"], abs=1e-5)
    assert isinstance(metrics["success_rate"], float) and isinstance(metrics["eval_pass_rate"], float)
