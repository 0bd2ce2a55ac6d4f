"""Releases behind the evaluation gate, and rollbacks."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends
from starlette.responses import Response

from agentos import crud
from agentos.api.bodies import ReleaseCreate, RollbackCreate
from agentos.api.services import Services, respond, services, workspace
from agentos.errors import Unprocessable
from agentos.releases import list_releases, record_release, roll_back

router = APIRouter()


@router.post("/api/workflows/{id_or_name}/release", status_code=201)
def release(
    id_or_name: str,
    body: ReleaseCreate | None = Body(default=None),
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """201 with the release, or 422 with the gate's reason (the blocked attempt is kept).
    `version` (default: the current one) is the version released; with environments declared,
    `environment` must be one of them."""
    body = body if body is not None else ReleaseCreate()
    with svc.db.write() as session:
        record = record_release(
            session, crud.find_workflow(session, ws, id_or_name), body.environment, body.commit, body.version
        )
    if record.status == "blocked":
        raise Unprocessable(record.detail or "eval gate: deployment blocked")
    return respond(record.to_dict(), 201)


@router.post("/api/workflows/{id_or_name}/rollback", status_code=201)
def rollback(
    id_or_name: str,
    body: RollbackCreate | None = Body(default=None),
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """201 with a new release pinning the version the environment ran before; 409 when it
    ran no earlier one (or the workflow declares no environments)."""
    environment = body.environment if body is not None else "production"
    with svc.db.write() as session:
        record = roll_back(session, crud.find_workflow(session, ws, id_or_name), environment)
    return respond(record.to_dict(), 201)


@router.get("/api/workflows/{id_or_name}/releases")
def releases(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    """Every attempt, newest first, blocked ones included (with their `detail`), and rollbacks."""
    with svc.db.read() as session:
        return respond([r.to_dict() for r in list_releases(session, crud.find_workflow(session, ws, id_or_name))])
