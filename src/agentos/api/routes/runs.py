"""Runs: start one, read one, list them."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from sqlalchemy import select
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from agentos import crud
from agentos.api.bodies import RunCreate
from agentos.api.services import Services, respond, services, workspace
from agentos.broker import LocalBroker
from agentos.deployments import run_snapshot
from agentos.engine.runner import WorkflowSnapshot
from agentos.errors import NotFound, Unprocessable
from agentos.models import Run

router = APIRouter()

STATUSES = ("queued", "running", "success", "failed")


@router.post("/api/workflows/{id_or_name}/runs", status_code=201)
async def start_run(
    id_or_name: str, body: RunCreate, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    """Run a version of the workflow; with `wait` (the default) answer when it finished.

    The version is the one named (`version`), else the one released to `environment` (default
    production) when the workflow declares environments, else the current one.

    On SQLite, a waited run whose nodes are all instant (set, condition, mock models without
    delay) executes on the event loop: its reads and its one write are local and take a
    fraction of a millisecond, less than handing it to a worker thread and back (and that
    thread's contention for the GIL with the others). Any other run, every run on
    PostgreSQL (whose round trips would hold the loop) and every run announced to a broker
    over the network starts in a worker thread.
    """
    if svc.db.is_sqlite and body.wait and svc.runner.queue is None and isinstance(svc.broker, LocalBroker):
        workflow = _snapshot(svc, ws, id_or_name, body)
        if not workflow.waits:
            return respond(svc.runner.start(workflow, body.input, wait=True), 201)
        return respond(await run_in_threadpool(svc.runner.start, workflow, body.input, wait=True), 201)
    return await run_in_threadpool(_start_run, svc, ws, id_or_name, body)


def _snapshot(svc: Services, ws: str, id_or_name: str, body: RunCreate) -> WorkflowSnapshot:
    with svc.db.read_connection() as connection:
        return run_snapshot(connection, ws, id_or_name, body.environment, body.version)


def _start_run(svc: Services, ws: str, id_or_name: str, body: RunCreate) -> Response:
    return respond(svc.runner.start(_snapshot(svc, ws, id_or_name, body), body.input, wait=body.wait), 201)


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
