"""Environments and the versions pinned to them.

A workflow may declare its environments (``"environments": ["staging", "production"]``).
Each of them then runs the version last released to it: a release (through the gate, see
``agentos.releases``) pins a version to an environment, a rollback pins the one released
to it before, and editing the workflow makes a new version without changing what any
environment runs. A run names an environment (default ``production``) or a version.

A workflow that declares no environments behaves as the reference says: its runs run the
current version, and its releases are records only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import Connection, Table, bindparam, select
from sqlalchemy.orm import Session

from agentos import crud
from agentos.engine.runner import WorkflowSnapshot
from agentos.errors import Conflict, NotFound, Unprocessable
from agentos.models import Release, Workflow, WorkflowVersion

DEFAULT_ENVIRONMENT = "production"

Reader = Session | Connection
"""An ORM session or a Core connection: both run the Core statements below."""

_RELEASES: Table = Release.__table__  # type: ignore[assignment]
_VERSIONS: Table = WorkflowVersion.__table__  # type: ignore[assignment]

# Built once, as crud's snapshot queries are: a run on an environment reads these.
_PINNED = (
    select(_RELEASES.c.version)
    .where(
        _RELEASES.c.workflow_id == bindparam("workflow_id"),
        _RELEASES.c.environment == bindparam("environment"),
        _RELEASES.c.status == "released",
    )
    .order_by(_RELEASES.c.created_at.desc())
    .limit(1)
)
_VERSION = select(_VERSIONS.c.nodes, _VERSIONS.c.checks).where(
    _VERSIONS.c.workflow_id == bindparam("workflow_id"), _VERSIONS.c.version == bindparam("version")
)


def pinned_version(reader: Reader, workflow_id: str, environment: str) -> int | None:
    """The version the environment runs: that of its newest released release (or rollback)."""
    version = reader.execute(_PINNED, {"workflow_id": workflow_id, "environment": environment}).scalar()
    return None if version is None else int(version)


def deployments(reader: Reader, workflow: Workflow) -> dict[str, int | None]:
    """Each declared environment and the version it runs (None: nothing released to it yet)."""
    return {name: pinned_version(reader, workflow.id, name) for name in workflow.environments or []}


def workflow_answer(reader: Reader, workflow: Workflow) -> dict[str, Any]:
    """The workflow's wire shape; with environments declared, also what each one runs. A
    workflow that declares none keeps the reference's shape, key for key."""
    shown = workflow.to_dict()
    if workflow.environments:
        shown |= {"environments": list(workflow.environments), "deployments": deployments(reader, workflow)}
    return shown


def require_declared(name: str, declared: list[str] | None, environment: str) -> None:
    """Refuse an environment the workflow does not declare (a typo such as ``prodution``)."""
    if declared and environment not in declared:
        raise Unprocessable(
            f"Unknown environment '{environment}': workflow '{name}' declares {', '.join(declared)}"
        )


def no_such_version(name: str, version: int, current: int) -> NotFound:
    versions = "its only version is 1" if current == 1 else f"its versions are 1 to {current}"
    return NotFound(f"Workflow '{name}' has no version {version} ({versions})")


def version_snapshot(reader: Reader, name: str, current: WorkflowSnapshot, version: int | None) -> WorkflowSnapshot:
    """What a run of `version` executes: its own nodes and checks, as stored for it (the
    current version's when `version` is None or current); 404 for a version never made."""
    if version is None or version == current.version:
        return current
    row = reader.execute(_VERSION, {"workflow_id": current.id, "version": version}).first()
    if row is None:
        raise no_such_version(name, version, current.version)
    return WorkflowSnapshot(current.workspace_id, current.id, version, list(row.nodes), list(row.checks))


def run_snapshot(
    connection: Connection, workspace_id: str, id_or_name: str, environment: str | None, version: int | None
) -> WorkflowSnapshot:
    """What a run executes: the `version` named, else the version pinned to `environment`
    (default production) when the workflow declares environments, else the current one."""
    if environment is not None and version is not None:
        raise Unprocessable("Invalid run: give either 'environment' or 'version', not both")
    row = crud.find_workflow_row(connection, workspace_id, id_or_name)
    if row.kind == "external":
        raise Conflict(
            f"Workflow '{row.name}' is external: its runs are the traces its agent sends to POST /v1/traces"
            " (OTLP/HTTP), so it cannot be run through POST /runs"
        )
    current = WorkflowSnapshot(workspace_id, row.id, row.version, list(row.nodes), list(row.checks))
    if version is not None:
        return version_snapshot(connection, row.name, current, version)
    declared: list[str] | None = row.environments
    if not declared:
        if environment is not None:
            raise Unprocessable(
                f"Workflow '{row.name}' declares no environments, so its runs run the current version"
                f" ({row.version}): leave out 'environment', run a version by number ({{\"version\": N}}),"
                f" or declare environments (PATCH /api/workflows/{row.id} with"
                f" {{\"environments\": [\"{environment}\"]}})"
            )
        return current
    environment = environment or DEFAULT_ENVIRONMENT
    require_declared(row.name, declared, environment)
    pinned = pinned_version(connection, row.id, environment)
    if pinned is None:
        raise Conflict(
            f"No version of workflow '{row.name}' is released to {environment} yet: release one"
            f" (POST /api/workflows/{row.id}/release with {{\"environment\": \"{environment}\"}}, which"
            f" releases the current version, or with a \"version\") or run a version by number"
            f" ({{\"version\": N}})"
        )
    return dataclasses.replace(version_snapshot(connection, row.name, current, pinned), environment=environment)
