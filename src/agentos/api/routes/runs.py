"""Runs: start one, read one, list them."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select
from starlette.responses import Response

from agentos import crud
from agentos.api.bodies import RunCreate
from agentos.api.services import Services, respond, services, workspace
from agentos.errors import NotFound, Unprocessable
from agentos.models import Run

router = APIRouter()

STATUSES = ("queued", "running", "success", "failed")


@router.post("/api/workflows/{id_or_name}/runs", status_code=201)
def start_run(
    id_or_name: str, body: RunCreate, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    """Run the workflow's current version; with `wait` (the default) answer when it finished."""
    with svc.db.read_connection() as connection:
        workflow = crud.find_snapshot(connection, ws, id_or_name)
    return respond(svc.runner.start(workflow, body.input, wait=body.wait), 201)


@router.get("/api/runs/{run_id}")
def get_run(run_id: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        run = session.scalar(select(Run).where(Run.workspace_id == ws, Run.id == run_id))
        if run is None:
            raise NotFound(f"Run '{run_id}' not found")
        return respond(run.to_dict())


@router.get("/api/runs")
def list_runs(
    workflow: str | None = None,
    status: str | None = None,
    limit: int = Query(100, ge=1, le=1000),
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """Newest first; filter by workflow (id or exact name) and status."""
    if status is not None and status not in STATUSES:
        raise Unprocessable(f"Unknown status '{status}' (expected one of {', '.join(STATUSES)})")
    with svc.db.read() as session:
        query = select(Run).where(Run.workspace_id == ws)
        if workflow is not None:
            query = query.where(Run.workflow_id == crud.find_workflow(session, ws, workflow).id)
        if status is not None:
            query = query.where(Run.status == status)
        rows = session.scalars(query.order_by(Run.created_at.desc(), Run.id).limit(limit))
        return respond([run.to_dict() for run in rows])
