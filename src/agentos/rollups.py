"""Daily rollups of finished runs, kept current in the transaction that finishes them.

Every path that moves a run to `success` or `failed` (the runner's final write, the sweep
of a gone process's runs) calls `add_finished` on the same connection, so the dashboard
(`agentos.metrics`) reads a few rows per day instead of scanning every run, and never
sees a run finished but not counted, or counted twice.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, Table
from sqlalchemy.dialects import postgresql, sqlite

from agentos.models import RunRollup

SHARDS = 8

_ROLLUPS: Table = RunRollup.__table__  # type: ignore[assignment]
_COUNTERS = ("runs", "succeeded", "cost_usd", "evaluated", "checks_passed", "checks_total")


def add_finished(connection: Connection, runs: Iterable[dict[str, Any]]) -> None:
    """Count finished runs, each a mapping with workspace_id, id, created_at, status,
    cost_usd, evals_passed, evals_total."""
    rows: dict[tuple[str, date, int], dict[str, Any]] = {}
    for run in runs:
        created = run["created_at"]
        day = created.date() if isinstance(created, datetime) else created
        shard = zlib.crc32(run["id"].encode()) % SHARDS
        row = rows.setdefault(
            (run["workspace_id"], day, shard),
            {"workspace_id": run["workspace_id"], "day": day, "shard": shard, **dict.fromkeys(_COUNTERS, 0)},
        )
        row["runs"] += 1
        row["succeeded"] += run["status"] == "success"
        row["cost_usd"] += float(run.get("cost_usd") or 0.0)
        row["evaluated"] += run.get("evals_total") is not None
        row["checks_passed"] += int(run.get("evals_passed") or 0)
        row["checks_total"] += int(run.get("evals_total") or 0)
    if not rows:
        return
    # Sorted, so two transactions upserting several rows take their locks in one order.
    connection.execute(_upsert(connection.dialect.name), [rows[key] for key in sorted(rows)])


@functools.cache
def _upsert(dialect_name: str) -> Any:
    """INSERT ... ON CONFLICT DO UPDATE adding to the counters; built once, so that its
    compiled form is cached (building it per run cost more than executing it)."""
    dialect = postgresql if dialect_name == "postgresql" else sqlite
    statement = dialect.insert(_ROLLUPS)
    return statement.on_conflict_do_update(
        index_elements=["workspace_id", "day", "shard"],
        set_={name: _ROLLUPS.c[name] + statement.excluded[name] for name in _COUNTERS},
    )
