"""GET /api/dashboard/metrics and GET /api/metrics."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import Response

from agentos.api.services import Services, respond, services, workspace
from agentos.metrics import dashboard_metrics
from agentos.rollups import fold_all
from agentos.workflow_metrics import workflow_metrics

router = APIRouter()


@router.get("/api/dashboard/metrics")
def metrics(ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(dashboard_metrics(session, ws))


@router.get("/api/metrics")
def metrics_by(
    workflow: str | None = None,
    check: str | None = None,
    model: str | None = None,
    environment: str | None = None,
    days: int = 30,
    group_by: str = "day",
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """Pass rate, cost and latency by day, workflow, check or model (see agentos.workflow_metrics)."""
    fold_all(svc.db)  # every run finished before this query counts
    with svc.db.read() as session:
        return respond(workflow_metrics(session, ws, workflow=workflow, check=check, model=model,
                                        environment=environment, days=days, group_by=group_by))
