"""Workflows: create, read (by id or exact name), list, change, delete, versions, checks, gate.

A workflow that declares environments also shows what each one runs (`deployments`)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends
from sqlalchemy import delete, select
from starlette.responses import Response

from agentos import crud
from agentos.api.bodies import ChecksPut, GatePut, WorkflowCreate, WorkflowPatch
from agentos.api.services import Services, respond, services, workspace
from agentos.deployments import workflow_answer
from agentos.models import Workflow, WorkflowVersion

router = APIRouter()


@router.post("/api/workflows", status_code=201)
def create_workflow(
    body: WorkflowCreate, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    with svc.db.write() as session:
        workflow = crud.create_workflow(session, ws, body.name, body.nodes, body.checks, body.gate, body.environments)
        return respond(workflow_answer(session, workflow), 201)


@router.get("/api/workflows")
def list_workflows(ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        rows = session.scalars(select(Workflow).where(Workflow.workspace_id == ws).order_by(Workflow.created_at))
        return respond([workflow_answer(session, w) for w in rows])


@router.get("/api/workflows/{id_or_name}")
def get_workflow(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.read() as session:
        return respond(workflow_answer(session, crud.find_workflow(session, ws, id_or_name)))


@router.patch("/api/workflows/{id_or_name}")
def patch_workflow(
    id_or_name: str, body: WorkflowPatch, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    changes: dict[str, Any] = {field: getattr(body, field) for field in body.model_fields_set}
    with svc.db.write() as session:
        workflow = crud.update_workflow(session, crud.find_workflow(session, ws, id_or_name), **changes)
        return respond(workflow_answer(session, workflow))


@router.delete("/api/workflows/{id_or_name}", status_code=204)
def delete_workflow(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    with svc.db.write() as session:
        workflow = crud.find_workflow(session, ws, id_or_name)
        session.execute(delete(WorkflowVersion).where(WorkflowVersion.workflow_id == workflow.id))
        session.delete(workflow)
    return Response(status_code=204)


@router.get("/api/workflows/{id_or_name}/versions")
def list_versions(id_or_name: str, ws: str = Depends(workspace), svc: Services = Depends(services)) -> Response:
    """Every version the workflow has had, oldest first."""
    with svc.db.read() as session:
        workflow = crud.find_workflow(session, ws, id_or_name)
        return respond([v.to_dict() for v in crud.list_versions(session, workflow)])


@router.put("/api/workflows/{id_or_name}/checks")
def put_checks(
    id_or_name: str, body: ChecksPut, ws: str = Depends(workspace), svc: Services = Depends(services)
) -> Response:
    """Replace the check list (400 and nothing saved if any check is invalid)."""
    with svc.db.write() as session:
        workflow = crud.update_workflow(
            session, crud.find_workflow(session, ws, id_or_name), checks=body.checks if body.checks else []
        )
        return respond(workflow_answer(session, workflow))


@router.put("/api/workflows/{id_or_name}/gate")
def put_gate(
    id_or_name: str,
    body: GatePut | None = Body(default=None),
    ws: str = Depends(workspace),
    svc: Services = Depends(services),
) -> Response:
    """Set {"min_pass_rate": 0.9} (and/or {"ancha": {"scenes": [...], "min_pass_rate": 0.8}},
    {"scorers": {"tone": 0.8}}),
    or remove the gate with null (or {"min_pass_rate": null})."""
    gate = None if body is None else {k: v for k, v in body.model_dump().items() if v is not None} or None
    with svc.db.write() as session:
        workflow = crud.update_workflow(session, crud.find_workflow(session, ws, id_or_name), gate=gate)
        return respond(workflow_answer(session, workflow))
