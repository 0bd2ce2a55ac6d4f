"""The dashboard's numbers for one workspace, from the daily rollups plus the unfinished runs.

Finished runs are counted in `run_rollups` as they finish (see agentos.rollups), so the
cost of this query does not grow with the number of runs: a few rows per day, plus the
runs still queued or running (found through the status index). Percentages are percents
with one decimal; `eval_pass_rate` counts every check on every evaluated run;
`runs_by_day` covers the last 30 days (UTC) oldest first, days without runs included
with zeros; runs count on the day they were created.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from agentos.models import Run, RunRollup, Workflow
from agentos.timestamps import utcnow

DAYS = 30


def dashboard_metrics(session: Session, workspace_id: str, now: datetime | None = None) -> dict[str, Any]:
    today = (now or utcnow()).date()
    first_day = today - timedelta(days=DAYS - 1)
    finished = session.execute(
        select(
            RunRollup.day,
            func.sum(RunRollup.runs),
            func.sum(RunRollup.succeeded),
            func.sum(RunRollup.cost_usd),
            func.sum(RunRollup.evaluated),
            func.sum(RunRollup.checks_passed),
            func.sum(RunRollup.checks_total),
        )
        .where(RunRollup.workspace_id == workspace_id)
        .group_by(RunRollup.day)
    ).all()
    day = func.date(Run.created_at)
    unfinished = session.execute(
        select(day, func.count(), func.coalesce(func.sum(Run.cost_usd), 0.0))
        .where(Run.status.in_(("queued", "running")), Run.workspace_id == workspace_id)
        .group_by(day)
    ).all()
    total = succeeded = done = evaluated = checks_passed = checks_total = 0
    cost = 0.0
    by_day: dict[date, tuple[int, float]] = {}

    def count_day(when: Any, runs: int, day_cost: float) -> None:
        when = as_date(when)
        if when >= first_day:
            runs_before, cost_before = by_day.get(when, (0, 0.0))
            by_day[when] = (runs_before + runs, cost_before + day_cost)

    for row in finished:
        runs, day_cost = int(row[1] or 0), float(row[3] or 0.0)
        total += runs
        done += runs
        succeeded += int(row[2] or 0)
        cost += day_cost
        evaluated += int(row[4] or 0)
        checks_passed += int(row[5] or 0)
        checks_total += int(row[6] or 0)
        count_day(row[0], runs, day_cost)
    for row in unfinished:
        runs, day_cost = int(row[1]), float(row[2] or 0.0)
        total += runs
        cost += day_cost
        count_day(row[0], runs, day_cost)
    active = session.scalar(select(func.count()).select_from(Workflow).where(Workflow.workspace_id == workspace_id))
    return {
        "total_runs": total,
        "success_rate": percent(succeeded, done),
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
        "eval_pass_rate": percent(checks_passed, checks_total),
        "evaluated_runs": evaluated,
    }


def percent(part: int | float, whole: int | float) -> float:
    """`part` of `whole` as a percent with one decimal (0 when `whole` is 0)."""
    return round(100.0 * float(part) / float(whole), 1) if whole else 0.0


def as_date(value: Any) -> date:
    """A day as the database gives it back: a date, a datetime or ISO text."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value)[:10])
