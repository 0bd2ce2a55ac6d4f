"""The dashboard's numbers for one workspace, from one SQL aggregate grouped by day.

Percentages are percents with one decimal; `eval_pass_rate` counts every check on every
evaluated run (from the per-run `evals_passed`/`evals_total` columns); `runs_by_day`
covers the last 30 days (UTC) oldest first, days without runs included with zeros.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from agentos.models import Run, Workflow
from agentos.timestamps import utcnow

DAYS = 30


def dashboard_metrics(session: Session, workspace_id: str, now: datetime | None = None) -> dict[str, Any]:
    """One scan of the workspace's runs grouped by day: totals are the sum over days."""
    today = (now or utcnow()).date()
    first_day = today - timedelta(days=DAYS - 1)
    day = func.date(Run.created_at)
    rows = session.execute(
        select(
            day,
            func.count(),
            func.sum(case((Run.status == "success", 1), else_=0)),
            func.sum(case((Run.status.in_(("success", "failed")), 1), else_=0)),
            func.coalesce(func.sum(Run.cost_usd), 0.0),
            func.count(Run.evals_total),
            func.coalesce(func.sum(Run.evals_passed), 0),
            func.coalesce(func.sum(Run.evals_total), 0),
        )
        .where(Run.workspace_id == workspace_id)
        .group_by(day)
    ).all()
    total = succeeded = finished = evaluated = checks_passed = checks_total = 0
    cost = 0.0
    by_day: dict[date, tuple[int, float]] = {}
    for row in rows:
        total += int(row[1])
        succeeded += int(row[2] or 0)
        finished += int(row[3] or 0)
        cost += float(row[4] or 0.0)
        evaluated += int(row[5] or 0)
        checks_passed += int(row[6] or 0)
        checks_total += int(row[7] or 0)
        when = _as_date(row[0])
        if when >= first_day:
            by_day[when] = (int(row[1]), float(row[4] or 0.0))
    active = session.scalar(select(func.count()).select_from(Workflow).where(Workflow.workspace_id == workspace_id))
    return {
        "total_runs": total,
        "success_rate": _percent(succeeded, finished),
        "total_cost_usd": round(cost, 5),
        "active_workflows": int(active or 0),
        "runs_by_day": [
            {
                "date": d.isoformat(),
                "count": by_day.get(d, (0, 0.0))[0],
                "cost_usd": round(by_day.get(d, (0, 0.0))[1], 5),
            }
            for d in (first_day + timedelta(days=i) for i in range(DAYS))
        ],
        "eval_pass_rate": _percent(checks_passed, checks_total),
        "evaluated_runs": evaluated,
    }


def _percent(part: int | float, whole: int | float) -> float:
    return round(100.0 * float(part) / float(whole), 1) if whole else 0.0


def _as_date(value: Any) -> date:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
