"""The dashboard's daily rollups: runs stored before migration 0002 are counted after it,
and pooled PostgreSQL connections that sat idle are pinged before use."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import insert, select

import agentos.db
from agentos.db import Database, migrate
from agentos.ids import new_id
from agentos.metrics import dashboard_metrics
from agentos.models import Run, Workspace
from agentos.timestamps import utcnow


@pytest.mark.parametrize("fresh_database_url", ["sqlite", "postgresql"], indirect=True)
def test_rollups__runs_stored_before_migration_0002_count_in_the_metrics(fresh_database_url):
    db = Database(fresh_database_url, run_migrations=False)
    try:
        migrate(db.engine, "0001")
        now = utcnow()
        workspace_id = new_id()
        with db.write_connection() as connection:  # the columns of 0001 only: later ones do not exist yet
            connection.execute(insert(Workspace.__table__).values(id=workspace_id, name="old", created_at=now))
        rows = [
            # (status, days ago, cost, evals passed, evals total)
            ("success", 0, 0.25, 5, 6),
            ("success", 0, 0.5, None, None),
            ("failed", 3, 0.125, None, None),
            ("running", 0, 0.0, None, None),
            ("success", 40, 1.0, 6, 6),
        ]
        with db.write_connection() as connection:
            connection.execute(insert(Run.__table__), [
                {"id": new_id(), "workspace_id": workspace_id, "workflow_id": "w" * 12, "workflow_version": 1,
                 "status": status, "input": {}, "state": {}, "cost_usd": cost, "created_at": now - timedelta(days=ago),
                 "evals_passed": passed, "evals_total": total}
                for status, ago, cost, passed, total in rows
            ])
        migrate(db.engine)
        with db.read() as session:
            metrics = dashboard_metrics(session, workspace_id)
    finally:
        db.dispose()
    assert metrics["total_runs"] == 5
    assert metrics["success_rate"] == 75.0  # 3 of the 4 finished runs
    assert metrics["total_cost_usd"] == 1.875
    assert (metrics["evaluated_runs"], metrics["eval_pass_rate"]) == (2, round(100 * 11 / 12, 1))
    by_day = {d["date"]: d for d in metrics["runs_by_day"]}
    assert by_day[now.date().isoformat()]["count"] == 3
    assert by_day[(now - timedelta(days=3)).date().isoformat()] == {
        "date": (now - timedelta(days=3)).date().isoformat(), "count": 1, "cost_usd": 0.125}
    assert sum(d["count"] for d in metrics["runs_by_day"]) == 4  # the 40-day-old run is outside the 30 days


@pytest.mark.parametrize("fresh_database_url", ["postgresql"], indirect=True)
def test_database__an_idle_pooled_connection_is_pinged_and_still_reads_and_writes(
    fresh_database_url, monkeypatch
):
    monkeypatch.setattr(agentos.db, "PING_AFTER_IDLE", 0.0)  # every checkout counts as idle
    db = Database(fresh_database_url)
    try:
        for name in ("first", "second"):
            with db.write() as session:
                session.add(Workspace(id=new_id(), name=name, created_at=utcnow()))
            with db.read() as session:
                assert name in set(session.scalars(select(Workspace.name)))
    finally:
        db.dispose()
