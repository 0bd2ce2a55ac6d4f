"""Releases behind the evaluation gate."""

from __future__ import annotations

from fastapi import APIRouter, Body, Depends
from starlette.responses import Response

from agentos import crud
from agentos.api.bodies import ReleaseCreate
from agentos.api.services import Services, respond, services, workspace
from agentos.errors import Unprocessable
from agentos.releases import list_releases, record_release

router = APIRouter()


@router.post("/api/workflows/{id_or_name}/release", status_code=201)
def release(
    id_or_name: str,
    body: ReleaseCreate | None = Body(default=None),
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """201 with the release, or 422 with the gate's reason (the blocked attempt is kept)."""
    environment = body.environment if body is not None else "production"
    commit = body.commit if body is not None else None
    with svc.db.write() as session:
        record = record_release(session, crud.find_workflow(session, ws, id_or_name), environment, commit)
    if record.status == "blocked":
        raise Unprocessable(record.detail or "eval gate: deployment blocked")
    return respond(record.to_dict(), 201)


@router.get("/api/workflows/{id_or_name}/releases")
def releases(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    """Every attempt, newest first, blocked ones included (with their `detail`)."""
    with svc.db.read() as session:
        return respond([r.to_dict() for r in list_releases(session, crud.find_workflow(session, ws, id_or_name))])
