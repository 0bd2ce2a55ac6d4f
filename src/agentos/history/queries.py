"""Reading a workspace's history: pages of runs, a scene over time, the rows the analysis reads.

Every query is scoped to one workspace and reads only complete runs. Pages are keyset
pages (``before`` = the last row's ``started_at~id``), so the thousandth page costs what the
first does. A page of runs leaves their manifest and summary (tens of KB each) unread, and
the branch and scene lists hop through their indexes from one name to the next instead of
reading every row (``bench/team_history.py`` times the pages over 10,000 runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Row, and_, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session, defer

from agentos.errors import BadRequest
from agentos.history.analysis import SceneOutcome
from agentos.models import AnchaRun, AnchaSceneResult

REGRESSION_RUNS = 2000
"""Runs the regressions read at most (the newest): a regression older than that is history."""
CHART_RUNS = 1000
"""Runs a scene's chart reads at most (the newest)."""


@dataclass
class RunsPage:
    runs: list[AnchaRun]
    """Without their ``manifest`` and ``summary`` (reading either raises)."""
    next: str | None
    scenes: dict[str, list[AnchaSceneResult]] = field(default_factory=dict)
    """With ``with_scenes``: each run's scenes by name, by the run's ``id``."""


def _cursor(text: str | None) -> tuple[datetime, str] | None:
    if not text:
        return None
    moment, _, pk = text.partition("~")
    try:
        return datetime.fromisoformat(moment), pk
    except ValueError:
        raise BadRequest(f"Invalid page cursor {text[:60]!r}: pass the `next` of the previous page") from None


def runs_page(session: Session, workspace_id: str, *, branch: str | None = None, commit: str | None = None,
              scene: str | None = None, limit: int = 50, before: str | None = None,
              with_scenes: bool = False) -> RunsPage:
    query = (select(AnchaRun)
             .options(defer(AnchaRun.manifest, raiseload=True), defer(AnchaRun.summary, raiseload=True))
             .where(AnchaRun.workspace_id == workspace_id, AnchaRun.status == "complete"))
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
    scenes: dict[str, list[AnchaSceneResult]] = {run.id: [] for run in rows}
    if with_scenes and rows:
        for result in session.scalars(select(AnchaSceneResult).where(AnchaSceneResult.run_pk.in_(list(scenes)))
                                      .order_by(AnchaSceneResult.run_pk, AnchaSceneResult.scene)):
            scenes[result.run_pk].append(result)
    return RunsPage(rows, f"{last.started_at.isoformat()}~{last.id}" if more and last else None,
                    scenes if with_scenes else {})


_CHART_COLUMNS = (AnchaSceneResult.run_id, AnchaSceneResult.started_at, AnchaSceneResult.commit,
                  AnchaSceneResult.branch, AnchaSceneResult.scene, AnchaSceneResult.trials, AnchaSceneResult.passed,
                  AnchaSceneResult.failed, AnchaSceneResult.pass_rate, AnchaSceneResult.gate_met,
                  AnchaSceneResult.outcomes)


def scene_results(session: Session, workspace_id: str, scene: str, *, branch: str | None = None,
                  limit: int = CHART_RUNS) -> list[Row[*tuple[Any, ...]]]:
    """The scene's newest ``limit`` results, oldest first: rows with the columns a chart reads
    (run_id, started_at, commit, branch, scene, trials, passed, failed, pass_rate, gate_met,
    outcomes). Not ORM objects: 1,000 of them took 17 ms a read against 7, and the slowest of
    30 reads 136 ms against 15."""
    query = select(*_CHART_COLUMNS).where(AnchaSceneResult.workspace_id == workspace_id,
                                          AnchaSceneResult.scene == scene)
    if branch:
        query = query.where(AnchaSceneResult.branch == branch)
    rows = list(session.execute(query.order_by(AnchaSceneResult.started_at.desc()).limit(limit)))
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


def as_outcome(row: AnchaSceneResult | Row[*tuple[Any, ...]]) -> SceneOutcome:
    outcomes = tuple(c == "P" for c in row.outcomes)
    trials = row.passed + row.failed
    # The trial order is used only when it agrees with the counts (a summary could disagree).
    if len(outcomes) != trials or sum(outcomes) != row.passed:
        outcomes = ()
    return SceneOutcome(run_id=row.run_id, started_at=row.started_at, commit=row.commit, branch=row.branch,
                        scene=row.scene, trials=trials, passed=row.passed, outcomes=outcomes)


def branches(session: Session, workspace_id: str, limit: int = 200) -> list[str]:
    """The workspace's branches, in order (the first ``limit``)."""
    return [b for b in _distinct(session, AnchaRun.branch, AnchaRun.workspace_id == workspace_id, limit) if b]


def scenes(session: Session, workspace_id: str, limit: int = 1000) -> list[str]:
    """The scenes of the workspace's runs, in order (the first ``limit``)."""
    return _distinct(session, AnchaSceneResult.scene, AnchaSceneResult.workspace_id == workspace_id, limit)


def _distinct(session: Session, column: InstrumentedAttribute[Any], scope: Any, limit: int) -> list[str]:
    """A column's distinct values, each found as the least one above the one before: a probe of
    an index that starts (workspace_id, column) per value, where GROUP BY read every row (a
    scan of all 60,000 scene rows of 10,000 runs, ~40 ms, growing with the history)."""
    values = select(func.min(column).label("value")).where(scope).cte("distinct_values", recursive=True)
    following = select(func.min(column)).where(scope, column > values.c.value).scalar_subquery()
    values = values.union_all(select(following).where(values.c.value.is_not(None)))
    return list(session.scalars(select(values.c.value).where(values.c.value.is_not(None)).limit(limit)))


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
