"""Metrics breakdowns: a run records the environment it ran in and metrics filter by it; the
rollups kept as runs finish equal those rebuilt from the runs; runs stored before migration
0009 count; latencies come back from buckets within 3.1%. On SQLite and PostgreSQL."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, func, insert, select
from test_service_environments import edit, make, release, run

from agentos.api.app import create_app
from agentos.db import Database, migrate
from agentos.ids import new_id
from agentos.keys import issue_key
from agentos.models import (
    Run,
    RunCheckRollup,
    RunLatencyRollup,
    RunMetricRollup,
    RunRollupQueue,
    Workflow,
    Workspace,
)
from agentos.rollups import (
    BLOCK_DAYS,
    add_finished,
    block_start,
    bucket_middle,
    fold_all,
    latency_bucket,
    rebuild_breakdowns,
)
from agentos.timestamps import utcnow
from agentos.workflow_metrics import workflow_metrics
from conftest import ServerThread

BREAKDOWNS = (RunMetricRollup, RunLatencyRollup, RunCheckRollup)


def groups(api: Any, **params: Any) -> dict[str, dict[str, Any]]:
    response = api.get("/api/metrics", params=params)
    assert response.status_code == 200, response.text
    return {g["key"]: g for g in response.json()["groups"]}


def test_environment__a_run_records_where_it_ran_and_metrics_filter_by_it(api):
    workflow = make(api, "Staged", ["staging", "production"])
    release(api, workflow, environment="production")
    edit(api, workflow, "v2")
    release(api, workflow, environment="staging")

    ran = [run(api, workflow), run(api, workflow, environment="production"),
           run(api, workflow, environment="staging"), run(api, workflow, version=2)]
    assert [r.get("environment") for r in ran] == ["production", "production", "staging", None]
    assert api.get(f"/api/runs/{ran[2]['id']}").json()["environment"] == "staging"

    assert groups(api, group_by="workflow", environment="production")["Staged"]["runs"] == 2
    assert groups(api, group_by="workflow", environment="staging")["Staged"]["runs"] == 1
    assert groups(api, group_by="workflow")["Staged"]["runs"] == 4
    assert groups(api, group_by="workflow", environment="prodution") == {}
    by_check = groups(api, group_by="check", environment="staging")
    assert {name: (g["runs"], g["checks_passed"], g["checks_total"]) for name, g in by_check.items()} == {
        "says v2": (1, 1, 1)}


def test_environment__runs_of_a_workflow_without_environments_keep_the_reference_shape(api):
    workflow = make(api, "Plain")
    plain = run(api, workflow)
    assert "environment" not in plain
    assert groups(api, group_by="workflow", environment="production") == {}
    assert groups(api, group_by="workflow")["Plain"]["runs"] == 1


def test_check__its_runs_are_those_of_the_versions_carrying_it_failed_ones_included(api):
    created = api.post("/api/workflows", json={
        "name": "Flaky", "nodes": [{"id": "x", "type": "set", "values": {"reply": "1 // input.get('d', 1)"}}],
        "checks": [{"name": "replied", "type": "contains", "target": "reply", "value": "1"}]})
    assert created.status_code == 201, created.text
    statuses = [api.post("/api/workflows/Flaky/runs", json={"input": {"d": d}}).json()["status"] for d in (1, 1, 0)]
    assert statuses == ["success", "success", "failed"]

    (replied,) = groups(api, group_by="check", workflow="Flaky").values()
    assert (replied["key"], replied["runs"], replied["success_rate"]) == ("replied", 3, 66.7)
    assert (replied["checks_passed"], replied["checks_total"]) == (2, 2)
    assert groups(api, group_by="workflow", check="nobody has this check") == {}


def test_latency_buckets__exact_below_32_ms_and_within_3_1_percent_above():
    assert [bucket_middle(latency_bucket(ms)) for ms in (0, 1, 17, 31)] == [0, 1, 17, 31]
    for ms in [*range(32, 5000), *random.Random(3).sample(range(5000, 10**9), 5000)]:
        bucket = latency_bucket(ms)
        assert bucket <= ms and latency_bucket(bucket) == bucket
        assert abs(bucket_middle(bucket) - ms) <= 0.032 * ms, ms


def test_latency__percentiles_are_nearest_rank_read_from_the_buckets(api):
    workflow = make(api, "Timed")  # no runs: only the rows written here count
    durations = {40: 50, 1000: 45, 9000: 5}  # ms: runs. p50 is 40 ms, p95 1000 ms
    db = Database(api.database_url, run_migrations=False)
    try:
        with db.write_connection() as connection:
            workspace_id = connection.scalar(select(Workflow.workspace_id).where(Workflow.id == workflow["id"]))
            connection.execute(insert(RunMetricRollup), [
                {"workspace_id": workspace_id, "day": day, "span_days": span, "workflow_id": workflow["id"],
                 "workflow_version": 1, "environment": "", "shard": 0, "runs": 100, "succeeded": 100,
                 "cost_usd": 0.0, "checks_passed": 0, "checks_total": 0}
                for span, day in ((1, utcnow().date()), (BLOCK_DAYS, block_start(utcnow().date())))])
            connection.execute(insert(RunLatencyRollup), [
                {"workspace_id": workspace_id, "day": day, "span_days": span, "workflow_id": workflow["id"],
                 "workflow_version": 1, "environment": "", "bucket_ms": latency_bucket(ms), "runs": runs}
                for ms, runs in durations.items()
                for span, day in ((1, utcnow().date()), (BLOCK_DAYS, block_start(utcnow().date())))])
    finally:
        db.dispose()
    timed = groups(api, group_by="workflow")["Timed"]
    assert (timed["latency_p50_ms"], timed["latency_p95_ms"]) == (40, bucket_middle(latency_bucket(1000)))
    assert abs(timed["latency_p95_ms"] - 1000) <= 32


def _rollups(db: Database) -> dict[str, set[tuple[Any, ...]]]:
    with db.read() as session:
        return {model.__tablename__: {tuple(sorted(row.items()))
                                      for row in session.execute(select(model.__table__)).mappings()}
                for model in BREAKDOWNS}


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_rollups__kept_as_runs_finish_equal_those_rebuilt_from_the_runs(fresh_database_url, tmp_path):
    db = Database(fresh_database_url)
    key = issue_key(db, "breakdowns")
    with (
        ServerThread(create_app(fresh_database_url, blob_url=f"file://{tmp_path}")) as server,
        httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as api,
    ):
        workflow = make(api, "Kept", ["staging", "production"])
        release(api, workflow, environment="production")
        edit(api, workflow, "v2")
        release(api, workflow, environment="staging")
        for body in ({}, {"environment": "staging"}, {"version": 1}, {}):
            run(api, workflow, **body)
        made = api.post("/api/workflows", json={
            "name": "Fails", "nodes": [{"id": "x", "type": "set", "values": {"y": "1 // 0"}}]})
        assert made.status_code == 201, made.text
        assert api.post("/api/workflows/Fails/runs", json={"input": {}}).json()["status"] == "failed"
    try:
        fold_all(db)
        kept = _rollups(db)
        days = [dict(row) for row in kept["run_metric_rollups"] if dict(row)["span_days"] == 1]
        blocks = [dict(row) for row in kept["run_metric_rollups"] if dict(row)["span_days"] == BLOCK_DAYS]
        assert sum(row["runs"] for row in days) == sum(row["runs"] for row in blocks) == 5
        with db.write_connection() as connection:
            for model in BREAKDOWNS:
                connection.execute(delete(model))
            assert rebuild_breakdowns(connection) == 5
        assert _rollups(db) == kept
    finally:
        db.dispose()


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_migration_0009__runs_stored_before_it_count_by_workflow_and_check(fresh_database_url):
    db = Database(fresh_database_url, run_migrations=False)
    try:
        migrate(db.engine, "0008")
        now = utcnow()
        workspace_id, workflow_id = new_id(), new_id()
        with db.write_connection() as connection:  # the columns of 0008: no environment yet
            connection.execute(insert(Workspace.__table__).values(id=workspace_id, name="old", created_at=now))
            connection.execute(insert(Workflow.__table__).values(
                id=workflow_id, workspace_id=workspace_id, name="Old", version=1, nodes=[], checks=[],
                created_at=now, updated_at=now))
            connection.execute(insert(Run.__table__).values([
                {"id": new_id(), "workspace_id": workspace_id, "workflow_id": workflow_id, "workflow_version": 1,
                 "status": status, "input": {}, "state": {}, "cost_usd": 0.5, "duration_ms": duration,
                 "created_at": now - timedelta(days=ago), "evals": evals,
                 "evals_passed": None if evals is None else sum(r["passed"] for r in evals["results"]),
                 "evals_total": None if evals is None else len(evals["results"])}
                for status, ago, duration, evals in (
                    ("success", 0, 30, {"results": [{"name": "a", "passed": True}, {"name": "b", "passed": False}]}),
                    ("success", 1, 50, {"results": [{"name": "a", "passed": False}, {"name": "b", "passed": False}]}),
                    ("failed", 2, 10, None),
                    ("running", 0, None, None),
                )
            ]))
        migrate(db.engine)
        with db.read() as session:
            by_workflow = workflow_metrics(session, workspace_id, group_by="workflow")
            by_check = workflow_metrics(session, workspace_id, group_by="check")
    finally:
        db.dispose()
    (old,) = by_workflow["groups"]
    assert (old["key"], old["runs"], old["checks_passed"], old["checks_total"]) == ("Old", 3, 1, 4)
    assert (old["cost_usd"], old["latency_p50_ms"], old["latency_p95_ms"]) == (1.5, 30, 50)
    assert [(g["key"], g["runs"], g["checks_passed"], g["checks_total"]) for g in by_check["groups"]] == [
        ("a", 3, 1, 2), ("b", 3, 0, 2)]


def test_ingest__the_resources_deployment_environment_is_the_runs_environment(api):
    span = {"traceId": "5b8efff798038103d269b633813fc60d", "spanId": "eee19b7ec3c1b176", "name": "answer",
            "startTimeUnixNano": str(time.time_ns()), "endTimeUnixNano": str(time.time_ns() + 2_000_000)}
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "staged-bot"}},
                               {"key": "deployment.environment.name", "value": {"stringValue": "canary"}}]}
    response = api.post("/v1/traces", json={"resourceSpans": [{"resource": resource,
                                                               "scopeSpans": [{"spans": [span]}]}]})
    assert response.status_code == 200, response.text
    (ingested,) = api.get("/api/runs", params={"workflow": "staged-bot"}).json()
    assert ingested["environment"] == "canary"
    assert groups(api, group_by="workflow", environment="canary")["staged-bot"]["runs"] == 1


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_latency__over_any_window_is_the_nearest_rank_of_that_windows_runs(fresh_database_url):
    """Days and blocks of 8 days together count each run of the window once, whatever the window:
    its runs, its check results and its latencies."""
    db = Database(fresh_database_url)
    rng = random.Random(11)
    now = utcnow()
    workspace_id, workflow_id = new_id(), new_id()
    runs = [(rng.randrange(45), rng.choice((20, 25, 30, 31)) if rng.random() < 0.5 else rng.randrange(32, 2000))
            for _ in range(400)]  # (days ago, duration ms)
    try:
        with db.write_connection() as connection:
            connection.execute(insert(Workspace.__table__).values(id=workspace_id, name="windows", created_at=now))
            connection.execute(insert(Workflow.__table__).values(
                id=workflow_id, workspace_id=workspace_id, name="Windows", version=1, nodes=[], checks=[],
                created_at=now, updated_at=now))
            connection.execute(insert(Run.__table__), [
                {"id": new_id(), "workspace_id": workspace_id, "workflow_id": workflow_id, "workflow_version": 1,
                 "status": "success", "input": {}, "state": {}, "cost_usd": 0.0, "duration_ms": duration,
                 "created_at": now - timedelta(days=ago), "evals_passed": int(ago % 3 == 0), "evals_total": 1,
                 "evals": {"results": [{"name": "every third day", "passed": ago % 3 == 0}]}}
                for ago, duration in runs])
            rebuild_breakdowns(connection)
        for days in (1, 2, 7, 8, 9, 15, 16, 17, 30, 45):
            with db.read() as session:
                (group,) = workflow_metrics(session, workspace_id, group_by="workflow", days=days)["groups"]
                (check,) = workflow_metrics(session, workspace_id, group_by="check", days=days)["groups"]
                by_day = workflow_metrics(session, workspace_id, group_by="day", days=days)["groups"]
            ranked = sorted(duration for ago, duration in runs if ago < days)
            passed = sum(1 for ago, _ in runs if ago < days and ago % 3 == 0)
            assert group["runs"] == check["runs"] == sum(g["runs"] for g in by_day) == len(ranked), days
            assert (group["checks_passed"], group["checks_total"]) == (passed, len(ranked)), days
            assert (check["checks_passed"], check["checks_total"]) == (passed, len(ranked)), days
            for percent in (50, 95):
                nearest = ranked[max(0, -(-percent * len(ranked) // 100) - 1)]
                assert group[f"latency_p{percent}_ms"] == bucket_middle(latency_bucket(nearest)), (days, percent)
    finally:
        db.dispose()


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_fold__two_folders_at_once_count_each_queued_run_once(fresh_database_url):
    db = Database(fresh_database_url)
    now = utcnow()
    runs = [{"id": new_id(), "workspace_id": "w" * 12, "workflow_id": "f" * 12, "workflow_version": 1,
             "status": "success", "input": {}, "state": {}, "cost_usd": 0.5, "duration_ms": 100, "created_at": now,
             "evals_passed": 1, "evals_total": 1, "evals": {"results": [{"name": "ok", "passed": True}]}}
            for _ in range(5000)]
    try:
        with db.write_connection() as connection:
            connection.execute(insert(Run.__table__), runs)
            add_finished(connection, runs)
        with ThreadPoolExecutor(2) as pool:
            folded = sum(pool.map(lambda _: fold_all(db), range(2)))
        assert folded == len(runs)
        with db.read() as session:
            (group,) = workflow_metrics(session, "w" * 12, group_by="check")["groups"]
            queued = session.scalar(select(func.count()).select_from(RunRollupQueue))
    finally:
        db.dispose()
    assert (group["runs"], group["checks_passed"], group["cost_usd"], queued) == (5000, 5000, 2500.0, 0)
