"""Workflows in the database: resolve by id or name, create, change (with versions), delete.

Every function is scoped to a workspace: another workspace's workflow is "not found".
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Row, Table, bindparam, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agentos.definitions import validate_environments, validate_gate, validate_nodes
from agentos.engine.runner import WorkflowSnapshot
from agentos.errors import BadRequest, Conflict, NotFound, Unprocessable
from agentos.evals.checks import CheckValidationError, validate_checks
from agentos.ids import looks_like_id, new_id
from agentos.models import Workflow, WorkflowVersion
from agentos.timestamps import utcnow

_UNSET: Any = object()
# Stands in for "/" inside one URL path segment (see agentos.api.app.EncodedSlashes).
SLASH = "\ue000"


def find_workflow(session: Session, workspace_id: str, id_or_name: str) -> Workflow:
    """The workflow with this id, else with this exact name, in the workspace."""
    id_or_name = id_or_name.replace(SLASH, "/")
    workflow = None
    if looks_like_id(id_or_name):
        workflow = session.scalar(
            select(Workflow).where(Workflow.workspace_id == workspace_id, Workflow.id == id_or_name)
        )
    if workflow is None:
        workflow = session.scalar(
            select(Workflow).where(Workflow.workspace_id == workspace_id, Workflow.name == id_or_name)
        )
    if workflow is None:
        raise NotFound(f"Workflow '{id_or_name}' not found")
    return workflow


_WORKFLOWS: Table = Workflow.__table__  # type: ignore[assignment]


_SNAPSHOT = select(
    _WORKFLOWS.c.id, _WORKFLOWS.c.name, _WORKFLOWS.c.version, _WORKFLOWS.c.nodes, _WORKFLOWS.c.checks,
    _WORKFLOWS.c.environments, _WORKFLOWS.c.kind,
)
# Built once: building a statement per call (and its cache key) cost more than running it.
_SNAPSHOT_BY_ID = _SNAPSHOT.where(
    _WORKFLOWS.c.workspace_id == bindparam("workspace_id"), _WORKFLOWS.c.id == bindparam("key")
)
_SNAPSHOT_BY_NAME = _SNAPSHOT.where(
    _WORKFLOWS.c.workspace_id == bindparam("workspace_id"), _WORKFLOWS.c.name == bindparam("key")
)


def find_workflow_row(connection: Connection, workspace_id: str, id_or_name: str) -> Row[*tuple[Any, ...]]:
    """The workflow (by id, else exact name) as one Core row: id, name, version, nodes, checks
    and environments, read with one query on a Core connection (`Database.read_connection`),
    no ORM session or objects: this is on the path of every run (`deployments.run_snapshot`)."""
    id_or_name = id_or_name.replace(SLASH, "/")
    params = {"workspace_id": workspace_id, "key": id_or_name}
    row = None
    if looks_like_id(id_or_name):
        row = connection.execute(_SNAPSHOT_BY_ID, params).first()
    if row is None:
        row = connection.execute(_SNAPSHOT_BY_NAME, params).first()
    if row is None:
        raise NotFound(f"Workflow '{id_or_name}' not found")
    return row


def snapshot(workflow: Workflow) -> WorkflowSnapshot:
    return WorkflowSnapshot(
        workspace_id=workflow.workspace_id,
        id=workflow.id,
        version=workflow.version,
        nodes=list(workflow.nodes),
        checks=list(workflow.checks),
    )


def checked(raw: Any) -> list[dict[str, Any]]:
    """Validated checks with their chk_ ids; an invalid batch is a 400 naming every problem."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadRequest("Invalid checks: checks must be a list")
    try:
        return list(validate_checks(raw))
    except CheckValidationError as exc:
        raise BadRequest(exc.detail) from None


def _valid_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise Unprocessable("Invalid workflow: 'name' is required")
    if len(name) > 200:
        raise Unprocessable("Invalid workflow: 'name' is longer than 200 characters")
    return name


def create_workflow(
    session: Session,
    workspace_id: str,
    name: Any,
    nodes: Any,
    checks: Any = None,
    gate: Any = None,
    environments: Any = None,
) -> Workflow:
    name = _valid_name(name)
    nodes = validate_nodes(nodes if nodes is not None else [])
    valid_checks = checked(checks)
    valid_gate = validate_gate(gate)
    declared = validate_environments(environments)
    _ensure_name_free(session, workspace_id, name)
    now = utcnow()
    workflow = Workflow(
        id=new_id(),
        workspace_id=workspace_id,
        name=name,
        version=1,
        nodes=nodes,
        checks=valid_checks,
        gate=valid_gate,
        created_at=now,
        updated_at=now,
        environments=declared,
    )
    session.add(workflow)
    session.add(
        WorkflowVersion(
            workflow_id=workflow.id, version=1, nodes=nodes, checks=valid_checks, gate=valid_gate, created_at=now
        )
    )
    _flush_unique(session, name)
    return workflow


def update_workflow(
    session: Session,
    workflow: Workflow,
    *,
    name: Any = _UNSET,
    nodes: Any = _UNSET,
    checks: Any = _UNSET,
    gate: Any = _UNSET,
    environments: Any = _UNSET,
) -> Workflow:
    """Apply the given changes; the version moves on when nodes, checks or gate change (not
    with the environments: declaring them changes no version, nor what any version runs)."""
    # Validate everything first: a refused change saves nothing.
    new_name = _valid_name(name) if name is not _UNSET else workflow.name
    new_nodes = validate_nodes(nodes) if nodes is not _UNSET else workflow.nodes
    if workflow.kind == "external" and new_nodes:
        raise Unprocessable(f"Workflow '{workflow.name}' is external (its runs are traces sent to POST /v1/traces):"
                            " it has no nodes; change its checks, gate or name only")
    new_checks = checked(checks) if checks is not _UNSET else workflow.checks
    new_gate = validate_gate(gate) if gate is not _UNSET else workflow.gate
    if environments is not _UNSET:
        workflow.environments = validate_environments(environments)
    if new_name != workflow.name:
        _ensure_name_free(session, workflow.workspace_id, new_name)
        workflow.name = new_name
    changed = (
        new_nodes != workflow.nodes
        or _without_ids(new_checks) != _without_ids(workflow.checks)
        or new_gate != workflow.gate
    )
    now = utcnow()
    if changed:
        workflow.nodes = new_nodes
        workflow.checks = new_checks
        workflow.gate = new_gate
        workflow.version += 1
        session.add(
            WorkflowVersion(
                workflow_id=workflow.id,
                version=workflow.version,
                nodes=new_nodes,
                checks=new_checks,
                gate=new_gate,
                created_at=now,
            )
        )
    workflow.updated_at = now
    _flush_unique(session, new_name)
    return workflow


def list_versions(session: Session, workflow: Workflow) -> list[WorkflowVersion]:
    return list(
        session.scalars(
            select(WorkflowVersion)
            .where(WorkflowVersion.workflow_id == workflow.id)
            .order_by(WorkflowVersion.version)
        )
    )


def _without_ids(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in check.items() if k != "id"} for check in checks]


def _ensure_name_free(session: Session, workspace_id: str, name: str) -> None:
    taken = session.scalar(
        select(Workflow.id).where(Workflow.workspace_id == workspace_id, Workflow.name == name)
    )
    if taken is not None:
        raise Conflict(f"A workflow named '{name}' already exists")


def _flush_unique(session: Session, name: str) -> None:
    # Two requests can race past _ensure_name_free; the unique constraint settles it.
    try:
        session.flush()
    except IntegrityError:
        raise Conflict(f"A workflow named '{name}' already exists") from None
