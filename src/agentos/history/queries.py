"""Reading a workspace's history: pages of runs, a scene over time, the rows the analysis reads.

Every query is scoped to one workspace and reads only complete runs. Pages are keyset
pages (``before`` = the last row's ``started_at~id``), so the thousandth page costs what the
first does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from agentos.errors import BadRequest
from agentos.history.analysis import SceneOutcome
from agentos.models import AnchaRun, AnchaSceneResult

CHART_RUNS = 1000
"""Runs a scene's chart reads at most (the newest)."""


@dataclass
class RunsPage:
    runs: list[AnchaRun]
    next: str | None


def _cursor(text: str | None) -> tuple[datetime, str] | None:
    if not text:
        return None
    moment, _, pk = text.partition("~")
    try:
        return datetime.fromisoformat(moment), pk
    except ValueError:
        raise BadRequest(f"Invalid page cursor {text[:60]!r}: pass the `next` of the previous page") from None


def runs_page(session: Session, workspace_id: str, *, branch: str | None = None, commit: str | None = None,
              scene: str | None = None, limit: int = 50, before: str | None = None) -> RunsPage:
    query = select(AnchaRun).where(AnchaRun.workspace_id == workspace_id, AnchaRun.status == "complete")
    if branch:
        query = query.where(AnchaRun.branch == branch)
    if commit:
        query = query.where(AnchaRun.commit.startswith(commit, autoescape=True)) if len(commit) < 40 \
            else query.where(AnchaRun.commit == commit)
    if scene:
        query = query.where(select(AnchaSceneResult.run_pk).where(
            AnchaSceneResult.run_pk == AnchaRun.id, AnchaSceneResult.scene == scene).exists())
    cursor = _cursor(before)
    if cursor is not None:
        moment, pk = cursor
        query = query.where(or_(AnchaRun.started_at < moment, and_(AnchaRun.started_at == moment, AnchaRun.id < pk)))
    rows = list(session.scalars(query.order_by(AnchaRun.started_at.desc(), AnchaRun.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    last = rows[-1] if rows else None
    return RunsPage(rows, f"{last.started_at.isoformat()}~{last.id}" if more and last else None)


def scene_results(session: Session, workspace_id: str, scene: str, *, branch: str | None = None,
                  limit: int = CHART_RUNS) -> list[AnchaSceneResult]:
    """The scene's newest ``limit`` results, oldest first."""
    query = select(AnchaSceneResult).where(AnchaSceneResult.workspace_id == workspace_id,
                                           AnchaSceneResult.scene == scene)
    if branch:
        query = query.where(AnchaSceneResult.branch == branch)
    rows = list(session.scalars(query.order_by(AnchaSceneResult.started_at.desc()).limit(limit)))
    rows.reverse()
    return rows


def outcomes(session: Session, workspace_id: str, *, branch: str | None = None, commit: str | None = None,
             last_runs: int | None = None, scene: str | None = None) -> list[SceneOutcome]:
    """Scene results as the analysis reads them; ``last_runs``: only the newest runs."""
    query = select(AnchaSceneResult).where(AnchaSceneResult.workspace_id == workspace_id)
    if branch:
        query = query.where(AnchaSceneResult.branch == branch)
    if commit:
        query = query.where(AnchaSceneResult.commit == commit)
    if scene:
        query = query.where(AnchaSceneResult.scene == scene)
    if last_runs is not None:
        runs = select(AnchaRun.id).where(AnchaRun.workspace_id == workspace_id, AnchaRun.status == "complete")
        if branch:
            runs = runs.where(AnchaRun.branch == branch)
        if commit:
            runs = runs.where(AnchaRun.commit == commit)
        newest = runs.order_by(AnchaRun.started_at.desc()).limit(last_runs)
        query = query.where(AnchaSceneResult.run_pk.in_(newest.scalar_subquery()))
    return [as_outcome(row) for row in session.scalars(query.order_by(AnchaSceneResult.started_at))]


def as_outcome(row: AnchaSceneResult) -> SceneOutcome:
    outcomes = tuple(c == "P" for c in row.outcomes)
    trials = row.passed + row.failed
    # The trial order is used only when it agrees with the counts (a summary could disagree).
    if len(outcomes) != trials or sum(outcomes) != row.passed:
        outcomes = ()
    return SceneOutcome(run_id=row.run_id, started_at=row.started_at, commit=row.commit, branch=row.branch,
                        scene=row.scene, trials=trials, passed=row.passed, outcomes=outcomes)


def branches(session: Session, workspace_id: str, limit: int = 200) -> list[str]:
    query = (select(AnchaRun.branch).where(AnchaRun.workspace_id == workspace_id, AnchaRun.branch.is_not(None))
             .group_by(AnchaRun.branch).limit(limit))
    return sorted(b for b in session.scalars(query) if b)


def scenes(session: Session, workspace_id: str, limit: int = 1000) -> list[str]:
    query = (select(AnchaSceneResult.scene).where(AnchaSceneResult.workspace_id == workspace_id)
             .group_by(AnchaSceneResult.scene).limit(limit))
    return sorted(session.scalars(query))


def newest_run_with(session: Session, workspace_id: str, commit: str, scenes: list[str]) -> tuple[str, int, int] | None:
    """The newest complete run of ``commit`` (a full SHA, or a prefix of at least 7) that ran every
    scene named: (run id, trials passed, trials judged) over those scenes."""
    runs = select(AnchaRun).where(AnchaRun.workspace_id == workspace_id, AnchaRun.status == "complete")
    runs = runs.where(AnchaRun.commit == commit) if len(commit) >= 40 or len(commit) < 7 \
        else runs.where(AnchaRun.commit.startswith(commit, autoescape=True))
    for run in session.scalars(runs.order_by(AnchaRun.started_at.desc()).limit(50)):
        rows = list(session.scalars(select(AnchaSceneResult).where(AnchaSceneResult.run_pk == run.id,
                                                                   AnchaSceneResult.scene.in_(scenes))))
        if len(rows) == len(scenes):
            return run.run_id, sum(r.passed for r in rows), sum(r.passed + r.failed for r in rows)
    return None
