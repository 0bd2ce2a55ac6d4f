"""Production metrics broken down by day, workflow, check or model (GET /api/metrics).

Each group reports runs, the success rate, the check pass rate, cost and the p50/p95
latency of finished runs created in the last `days` days (UTC), optionally of one
workflow, check, model or environment. Everything is read from the breakdown rollups that
`agentos.rollups` keeps current as runs finish (per day, workflow version and environment),
never from the runs themselves, so the answer costs the same over a million runs as over
ten. Latencies come from buckets within 3.1% of the nearest-rank value (exact below 32 ms).

A check's runs are the runs of the workflow versions (in each environment) that carry it:
grouped or filtered by check, `runs`, success rate, cost and latency are those runs'
(failed runs included), and `checks_passed`/`checks_total` count that check alone.

The model of a run is the model its version's llm nodes name (from `workflow_versions`),
so a run of a version with two models counts under both; runs of versions without llm
nodes count under no model. A run's environment is the one it ran in on a workflow that
declares environments (see `agentos.deployments`); runs that named a version, and runs of
workflows that declare none, are in no environment.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, Table, and_, func, or_, select, tuple_
from sqlalchemy.orm import Session

from agentos.errors import NotFound, Unprocessable
from agentos.metrics import as_date, percent
from agentos.models import RunCheckRollup, RunLatencyRollup, RunMetricRollup, Workflow, WorkflowVersion
from agentos.rollups import BLOCK_DAYS, block_start, bucket_middle
from agentos.timestamps import utcnow

GROUPINGS = ("day", "workflow", "check", "model")
MAX_DAYS = 366

_METRICS: Table = RunMetricRollup.__table__  # type: ignore[assignment]
_LATENCIES: Table = RunLatencyRollup.__table__  # type: ignore[assignment]
_CHECKS: Table = RunCheckRollup.__table__  # type: ignore[assignment]
_UNITS = {"day": ("day",), "workflow": ("workflow_id",), "model": ("workflow_id", "workflow_version"),
          "check": ("workflow_id", "workflow_version", "environment")}
"""The rollup columns each grouping sums over before its groups are made."""
_COMBO = ("workflow_id", "workflow_version", "environment")


@dataclass
class _Group:
    runs: int = 0
    succeeded: int = 0
    cost_usd: float = 0.0
    checks_passed: int = 0
    checks_total: int = 0
    latencies: dict[int, int] = field(default_factory=dict)
    """Runs per latency bucket."""

    def add(self, other: _Group, checks: bool = True) -> None:
        self.runs += other.runs
        self.succeeded += other.succeeded
        self.cost_usd += other.cost_usd
        if checks:
            self.checks_passed += other.checks_passed
            self.checks_total += other.checks_total
        for bucket, runs in other.latencies.items():
            self.latencies[bucket] = self.latencies.get(bucket, 0) + runs

    def to_dict(self, key: str) -> dict[str, Any]:
        ranked = sorted(self.latencies.items())
        return {
            "key": key,
            "runs": self.runs,
            "success_rate": percent(self.succeeded, self.runs),
            "checks_passed": self.checks_passed,
            "checks_total": self.checks_total,
            "pass_rate": percent(self.checks_passed, self.checks_total),
            "cost_usd": round(self.cost_usd, 5),
            "latency_p50_ms": _percentile(ranked, 50),
            "latency_p95_ms": _percentile(ranked, 95),
        }


def workflow_metrics(
    session: Session,
    workspace_id: str,
    *,
    workflow: str | None = None,
    check: str | None = None,
    model: str | None = None,
    environment: str | None = None,
    days: int = 30,
    group_by: str = "day",
    now: datetime | None = None,
) -> dict[str, Any]:
    if group_by not in GROUPINGS:
        raise Unprocessable(f"group_by: {group_by!r} is not one of {', '.join(GROUPINGS)}")
    if not 1 <= days <= MAX_DAYS:
        raise Unprocessable(f"days: {days} is out of range; give a number of days from 1 to {MAX_DAYS}")
    first_day = (now or utcnow()).date() - timedelta(days=days - 1)
    workflow_id = _workflow_id(session, workspace_id, workflow) if workflow else None
    models = _models_by_version(session, workspace_id, workflow_id) if model or group_by == "model" else {}
    versions = None
    if model:
        versions = [key for key, named in models.items() if model in named]
        if not versions:
            return _answer(group_by, days, {})
    scope = _Scope(workspace_id, first_day, workflow_id, environment, versions)

    combos: list[tuple[Any, ...]] | None = None
    check_counts: dict[tuple[Any, ...], _Group] = {}
    if check is not None or group_by == "check":
        check_counts = _check_counts(session, scope, check, group_by)
        if check is not None:
            combos = sorted({key[-3:] for key in check_counts})
            if not combos:
                return _answer(group_by, days, {})
    units = _units(session, scope, _UNITS[group_by], combos)

    if group_by == "check":
        groups = _by_check(units, check_counts)
    else:
        groups = _fold(units, group_by, models, check_counts if check is not None else None)
    if group_by == "workflow":
        names = dict(session.execute(select(Workflow.id, Workflow.name)
                                     .where(Workflow.workspace_id == workspace_id)).tuples().all())
        groups = {names.get(key, key): group for key, group in groups.items()}
    return _answer(group_by, days, groups)


@dataclass(frozen=True)
class _Scope:
    """What the rollups are filtered by."""

    workspace_id: str
    first_day: date
    workflow_id: str | None
    environment: str | None
    versions: list[tuple[str, int]] | None

    def where(self, table: Table, combos: list[tuple[Any, ...]] | None, by_day: bool) -> list[Any]:
        """Rows of the window's days, by day; else the blocks of 8 days from the first block that
        starts in the window (the last one holds today: no run is of a later day), and the days
        before it."""
        cutoff = block_start(self.first_day)
        if cutoff < self.first_day:
            cutoff += timedelta(days=BLOCK_DAYS)
        if by_day:
            where = [table.c.workspace_id == self.workspace_id, table.c.span_days == 1, table.c.day >= self.first_day]
        else:
            where = [table.c.workspace_id == self.workspace_id, or_(
                and_(table.c.span_days == BLOCK_DAYS, table.c.day >= cutoff),
                and_(table.c.span_days == 1, table.c.day >= self.first_day, table.c.day < cutoff))]
        if self.workflow_id is not None:
            where.append(table.c.workflow_id == self.workflow_id)
        if self.environment is not None:
            where.append(table.c.environment == self.environment)
        if self.versions is not None:
            where.append(tuple_(table.c.workflow_id, table.c.workflow_version).in_(self.versions))
        if combos is not None:
            where.append(tuple_(*(table.c[name] for name in _COMBO)).in_(combos))
        return where


def _check_counts(session: Session, scope: _Scope, check: str | None, group_by: str) -> dict[tuple[Any, ...], _Group]:
    """Each check's evaluations and passes, by (check, [day,] workflow, version, environment)."""
    keys = [_CHECKS.c.check_name, *([_CHECKS.c.day] if group_by == "day" else []), *(_CHECKS.c[n] for n in _COMBO)]
    where = scope.where(_CHECKS, None, group_by == "day")
    if check is not None:
        where.append(_CHECKS.c.check_name == check)
    query = (select(*keys, func.sum(_CHECKS.c.evaluated), func.sum(_CHECKS.c.passed))
             .where(*where).group_by(*keys))
    width = len(keys)
    return {tuple(row[:width]): _Group(checks_total=int(row[width] or 0), checks_passed=int(row[width + 1] or 0))
            for row in session.execute(query)}


def _units(session: Session, scope: _Scope, unit: tuple[str, ...],
           combos: list[tuple[Any, ...]] | None) -> dict[tuple[Any, ...], _Group]:
    """The runs' counts, cost and latency buckets summed by the `unit` columns."""
    keys = [_METRICS.c[name] for name in unit]
    sums: Select[Any] = (
        select(*keys, func.sum(_METRICS.c.runs), func.sum(_METRICS.c.succeeded), func.sum(_METRICS.c.cost_usd),
               func.sum(_METRICS.c.checks_passed), func.sum(_METRICS.c.checks_total))
        .where(*scope.where(_METRICS, combos, "day" in unit)).group_by(*keys)
    )
    width = len(keys)
    units: dict[tuple[Any, ...], _Group] = {}
    for row in session.execute(sums):
        runs, succeeded, cost, passed, total = row[width:]
        units[tuple(row[:width])] = _Group(int(runs or 0), int(succeeded or 0), float(cost or 0.0),
                                           int(passed or 0), int(total or 0))
    latency_keys = [_LATENCIES.c[name] for name in unit]
    buckets = (select(*latency_keys, _LATENCIES.c.bucket_ms, func.sum(_LATENCIES.c.runs))
               .where(*scope.where(_LATENCIES, combos, "day" in unit))
               .group_by(*latency_keys, _LATENCIES.c.bucket_ms))
    for row in session.execute(buckets):
        group = units.get(tuple(row[:width]))
        if group is not None:
            group.latencies[int(row[width])] = int(row[width + 1])
    return units


def _fold(units: dict[tuple[Any, ...], _Group], group_by: str, models: dict[tuple[str, int], set[str]],
          check_counts: dict[tuple[Any, ...], _Group] | None) -> dict[str, _Group]:
    """Units into groups by day, workflow or model; with a check, its counts replace the runs' checks."""
    out: dict[str, _Group] = defaultdict(_Group)
    for key, group in units.items():
        for name in _group_keys(key, group_by, models):
            out[name].add(group, checks=check_counts is None)
    for key, counts in (check_counts or {}).items():  # key: (check, [day,] workflow, version, environment)
        for name in _group_keys(key[1:1 + len(_UNITS[group_by])], group_by, models):
            out[name].checks_passed += counts.checks_passed
            out[name].checks_total += counts.checks_total
    return dict(out)


def _group_keys(unit: tuple[Any, ...], group_by: str, models: dict[tuple[str, int], set[str]]) -> Iterable[str]:
    if group_by == "day":
        return (as_date(unit[0]).isoformat(),)
    if group_by == "workflow":
        return (str(unit[0]),)
    return models.get((str(unit[0]), int(unit[1])), ())


def _by_check(units: dict[tuple[Any, ...], _Group], check_counts: dict[tuple[Any, ...], _Group]) -> dict[str, _Group]:
    """Each check's group: the runs of the versions (and environments) that carry it, its own counts.
    Checks carried by the same versions (most of them) share one sum of those versions' runs."""
    carrying: dict[str, set[tuple[Any, ...]]] = defaultdict(set)
    counts: dict[str, _Group] = defaultdict(_Group)
    for key, counted in check_counts.items():  # key: (check, workflow, version, environment)
        name = str(key[0])
        carrying[name].add(key[1:])
        counts[name].checks_passed += counted.checks_passed
        counts[name].checks_total += counted.checks_total
    sums: dict[frozenset[tuple[Any, ...]], _Group] = {}
    out: dict[str, _Group] = {}
    for name, combos in carrying.items():
        shared = frozenset(combos)
        if shared not in sums:
            sums[shared] = _Group()
            for combo in shared & units.keys():
                sums[shared].add(units[combo], checks=False)
        runs = sums[shared]
        out[name] = _Group(runs.runs, runs.succeeded, runs.cost_usd, counts[name].checks_passed,
                           counts[name].checks_total, runs.latencies)
    return out


def _answer(group_by: str, days: int, groups: dict[str, _Group]) -> dict[str, Any]:
    return {"group_by": group_by, "days": days,
            "groups": [groups[key].to_dict(key) for key in sorted(groups)]}


def _workflow_id(session: Session, workspace_id: str, id_or_name: str) -> str:
    found = session.scalar(select(Workflow.id).where(
        Workflow.workspace_id == workspace_id, (Workflow.id == id_or_name) | (Workflow.name == id_or_name)))
    if found is None:
        raise NotFound(f"workflow: no workflow {id_or_name!r} in this workspace (GET /api/workflows lists them)")
    return found


def _models_by_version(session: Session, workspace_id: str, workflow_id: str | None) -> dict[tuple[str, int], set[str]]:
    query = (select(WorkflowVersion.workflow_id, WorkflowVersion.version, WorkflowVersion.nodes)
             .join(Workflow, Workflow.id == WorkflowVersion.workflow_id)
             .where(Workflow.workspace_id == workspace_id))
    if workflow_id is not None:
        query = query.where(WorkflowVersion.workflow_id == workflow_id)
    return {(wid, version): {str(node["model"]) for node in nodes or []
                             if isinstance(node, dict) and node.get("type") == "llm" and node.get("model")}
            for wid, version, nodes in session.execute(query).tuples()}


def _percentile(ranked: list[tuple[int, int]], percent: int) -> int | None:
    """The nearest-rank percentile of (bucket, runs) in bucket order: its bucket's middle (None without runs)."""
    total = sum(runs for _, runs in ranked)
    if not total:
        return None
    rank, seen = max(1, math.ceil(percent / 100 * total)), 0
    for bucket, runs in ranked:
        seen += runs
        if seen >= rank:
            return bucket_middle(bucket)
    return bucket_middle(ranked[-1][0])
