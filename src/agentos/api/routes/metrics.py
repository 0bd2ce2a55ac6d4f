"""GET /api/dashboard/metrics."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from starlette.responses import Response

from agentos.api.services import Services, respond, services, workspace
from agentos.metrics import dashboard_metrics

router = APIRouter()


@router.get("/api/dashboard/metrics")
def metrics(ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(dashboard_metrics(session, ws))
