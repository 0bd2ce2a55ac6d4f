"""Production metrics broken down by day, workflow, check or model (GET /api/metrics).

Each group reports runs, the success rate, the check pass rate, cost and the p50/p95
latency of finished runs created in the last `days` days (UTC). Counts, sums and the
check totals are SQL aggregates over the runs table (no JSON read) when grouping by day,
workflow or model; the latencies are read as one integer column per group and ranked here
(SQLite has no percentile function). Grouping by check, or filtering on one, reads each
evaluated run's `evals` results, since the per-check outcome is only stored there.

The model of a run is the model its version's llm nodes name (from `workflow_versions`),
so a run of a version with two models counts under both; runs of versions without llm
nodes count under no model.

Runs do not record the environment they ran in (only their version), so `environment`
is refused with a 422 saying so, rather than answered from a guess.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, case, func, or_, select
from sqlalchemy.orm import Session

from agentos.errors import NotFound, Unprocessable
from agentos.models import Run, Workflow, WorkflowVersion
from agentos.timestamps import utcnow

GROUPINGS = ("day", "workflow", "check", "model")
MAX_DAYS = 366
FINISHED = ("success", "failed")


@dataclass
class _Group:
    runs: int = 0
    succeeded: int = 0
    cost_usd: float = 0.0
    checks_passed: int = 0
    checks_total: int = 0
    durations: list[int] = field(default_factory=list)

    def add(self, other: _Group) -> None:
        self.runs += other.runs
        self.succeeded += other.succeeded
        self.cost_usd += other.cost_usd
        self.checks_passed += other.checks_passed
        self.checks_total += other.checks_total
        self.durations.extend(other.durations)

    def to_dict(self, key: str) -> dict[str, Any]:
        ranked = sorted(self.durations)
        return {
            "key": key,
            "runs": self.runs,
            "success_rate": _percent(self.succeeded, self.runs),
            "checks_passed": self.checks_passed,
            "checks_total": self.checks_total,
            "pass_rate": _percent(self.checks_passed, self.checks_total),
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
    if environment is not None:
        raise Unprocessable("environment: runs do not record the environment they ran in yet, so metrics"
                            " cannot be filtered by it; filter by workflow instead")
    first_day = (now or utcnow()).date() - timedelta(days=days - 1)
    since = datetime.combine(first_day, datetime.min.time())
    where = [Run.workspace_id == workspace_id, Run.status.in_(FINISHED), Run.created_at >= since]
    workflow_id = _workflow_id(session, workspace_id, workflow) if workflow else None
    if workflow_id is not None:
        where.append(Run.workflow_id == workflow_id)
    models = _models_by_version(session, workspace_id, workflow_id) if model or group_by == "model" else {}
    if model:
        versions = [key for key, named in models.items() if model in named]
        if not versions:
            return _answer(group_by, days, {})
        where.append(or_(*(and_(Run.workflow_id == wid, Run.workflow_version == version)
                           for wid, version in versions)))

    if check or group_by == "check":
        groups = _by_check(session, where, check, group_by, models)
    else:
        groups = _by_columns(session, where, group_by, models)
    if group_by == "workflow":
        names = dict(session.execute(select(Workflow.id, Workflow.name)
                                     .where(Workflow.workspace_id == workspace_id)).tuples().all())
        groups = {names.get(key, key): group for key, group in groups.items()}
    return _answer(group_by, days, groups)


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


def _key_columns(group_by: str) -> list[Any]:
    if group_by == "day":
        return [func.date(Run.created_at)]
    if group_by == "workflow":
        return [Run.workflow_id]
    return [Run.workflow_id, Run.workflow_version]


def _by_columns(session: Session, where: list[Any], group_by: str,
                models: dict[tuple[str, int], set[str]]) -> dict[str, _Group]:
    keys = _key_columns(group_by)
    sums: Select[Any] = (
        select(*keys, func.count(), func.sum(case((Run.status == "success", 1), else_=0)),
               func.coalesce(func.sum(Run.cost_usd), 0.0), func.coalesce(func.sum(Run.evals_passed), 0),
               func.coalesce(func.sum(Run.evals_total), 0))
        .where(*where).group_by(*keys)
    )
    per_key: dict[tuple[Any, ...], _Group] = {}
    width = len(keys)
    for row in session.execute(sums):
        key = tuple(row[:width])
        runs, succeeded, cost, passed, total = row[width:]
        per_key[key] = _Group(int(runs), int(succeeded or 0), float(cost or 0.0), int(passed or 0), int(total or 0))
    durations = select(*keys, Run.duration_ms).where(*where, Run.duration_ms.is_not(None))
    for row in session.execute(durations):
        group = per_key.get(tuple(row[:width]))
        if group is not None:
            group.durations.append(int(row[width]))
    return _fold(per_key, group_by, models)


def _fold(per_key: dict[tuple[Any, ...], _Group], group_by: str,
          models: dict[tuple[str, int], set[str]]) -> dict[str, _Group]:
    out: dict[str, _Group] = defaultdict(_Group)
    for key, group in per_key.items():
        if group_by == "day":
            out[_as_date(key[0]).isoformat()].add(group)
        elif group_by == "workflow":
            out[str(key[0])].add(group)
        else:
            for name in models.get((str(key[0]), int(key[1])), ()):
                out[name].add(group)
    return dict(out)


def _by_check(session: Session, where: list[Any], check: str | None, group_by: str,
              models: dict[tuple[str, int], set[str]]) -> dict[str, _Group]:
    """Per-check outcomes, read from each run's `evals` results."""
    query = select(Run.workflow_id, Run.workflow_version, func.date(Run.created_at), Run.status, Run.cost_usd,
                   Run.duration_ms, Run.evals).where(*where)
    out: dict[str, _Group] = defaultdict(_Group)
    for workflow_id, version, day, status, cost, duration, evals in session.execute(query).tuples():
        results = [r for r in (evals or {}).get("results", []) if isinstance(r, dict)]
        named = [r for r in results if check is None or r.get("name") == check or r.get("id") == check]
        if check is not None and status == "success" and not named:
            continue
        if group_by == "check":
            keys: list[tuple[str, list[dict[str, Any]]]] = [(str(r.get("name") or r.get("id")), [r]) for r in named]
        elif group_by == "day":
            keys = [(_as_date(day).isoformat(), named)]
        elif group_by == "workflow":
            keys = [(workflow_id, named)]
        else:
            keys = [(name, named) for name in models.get((workflow_id, version), ())]
        for key, counted in keys:
            group = out[key]
            group.runs += 1
            group.succeeded += status == "success"
            group.cost_usd += float(cost or 0.0)
            group.checks_passed += sum(1 for r in counted if r.get("passed"))
            group.checks_total += len(counted)
            if duration is not None:
                group.durations.append(int(duration))
    return dict(out)


def _percentile(ranked: list[int], percent: int) -> int | None:
    """The nearest-rank percentile (None without values)."""
    if not ranked:
        return None
    return ranked[max(0, math.ceil(percent / 100 * len(ranked)) - 1)]


def _percent(part: int | float, whole: int | float) -> float:
    return round(100.0 * float(part) / float(whole), 1) if whole else 0.0


def _as_date(value: Any) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
