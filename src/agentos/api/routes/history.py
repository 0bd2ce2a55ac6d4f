"""A workspace's history as JSON, for scripts and dashboards (the hosted console shows the same):

    GET /api/ancha/scenes/{scene}/history?branch=   the scene's pass rate per commit
    GET /api/ancha/flaky?branch=|commit=&last=20    flaky scenes, most flips first
    GET /api/ancha/regressions?branch=              the first commit of each drop beyond noise
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends, Query
from starlette.responses import Response

from agentos.api.services import Services, caller, respond, services
from agentos.errors import NotFound, Unprocessable
from agentos.history import analysis, queries
from agentos.keys import Caller
from agentos.timestamps import iso

router = APIRouter()


def _plain(item: Any) -> dict[str, Any]:
    return {k: iso(v) if hasattr(v, "isoformat") else v for k, v in asdict(item).items()}


@router.get("/api/ancha/scenes/{scene}/history")
def scene_history(scene: str, branch: str | None = None, who: Caller = Depends(caller),
                  svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        rows = queries.scene_results(session, who.workspace_id, scene, branch=branch)
    if not rows:
        raise NotFound(f"Scene '{scene[:100]}' is in no uploaded run of this workspace")
    series = analysis.pass_rate_series([queries.as_outcome(r) for r in rows], scene)
    return respond({"scene": scene, "commits": [_plain(p) for p in series]})


@router.get("/api/ancha/flaky")
def flaky(branch: str | None = None, commit: str | None = None, last: int = Query(default=20, ge=1, le=500),
          who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    if branch and commit:
        raise Unprocessable("Give branch or commit, not both")
    with svc.db.read() as session:
        rows = queries.outcomes(session, who.workspace_id, branch=branch, commit=commit, last_runs=last)
    return respond([_plain(f) for f in analysis.flaky_scenes(rows, last=last, branch=branch, commit=commit)])


@router.get("/api/ancha/regressions")
def regressions(branch: str | None = None, who: Caller = Depends(caller), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        rows = queries.outcomes(session, who.workspace_id, branch=branch, last_runs=queries.REGRESSION_RUNS)
    return respond([_plain(r) for r in analysis.regressions(rows, branch=branch)])
