"""Releases and the evaluation gate.

A release of a workflow with a gate needs a completed evaluation of the workflow's
current version whose check pass-rate is at least the gate's `min_pass_rate`; otherwise
the attempt is recorded as `blocked` and answered 422 with the reason.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentos.ids import new_id
from agentos.models import Evaluation, Release, Workflow
from agentos.timestamps import utcnow


def latest_completed_evaluation(session: Session, workflow: Workflow) -> Evaluation | None:
    return session.scalar(
        select(Evaluation)
        .where(
            Evaluation.workflow_id == workflow.id,
            Evaluation.workflow_version == workflow.version,
            Evaluation.status == "completed",
        )
        .order_by(Evaluation.completed_at.desc(), Evaluation.created_at.desc())
        .limit(1)
    )


def gate_verdict(workflow: Workflow, evaluation: Evaluation | None) -> str | None:
    """Why the gate blocks this release, or None when it may go."""
    if not workflow.gate or workflow.gate.get("min_pass_rate") is None:
        return None
    required = float(workflow.gate["min_pass_rate"])
    if evaluation is None:
        return f"eval gate: no completed evaluation of version {workflow.version} — deployment blocked"
    rate = evaluation.check_pass_rate
    if rate is None:
        return (
            f"eval gate: evaluation {evaluation.id} of version {workflow.version} evaluated no checks"
            " — deployment blocked"
        )
    if rate < required:
        return (
            f"eval gate: check pass-rate {rate * 100:.1f}% is below the required {required * 100:.1f}%"
            " — deployment blocked"
        )
    return None


def record_release(session: Session, workflow: Workflow, environment: str) -> Release:
    """Record the attempt, released or blocked (its `detail` says why)."""
    evaluation = latest_completed_evaluation(session, workflow)
    blocked = gate_verdict(workflow, evaluation)
    release = Release(
        id=new_id(),
        workspace_id=workflow.workspace_id,
        workflow_id=workflow.id,
        environment=environment,
        version=workflow.version,
        evaluation_id=evaluation.id if evaluation is not None else None,
        status="blocked" if blocked else "released",
        detail=blocked,
        created_at=utcnow(),
    )
    session.add(release)
    return release


def list_releases(session: Session, workflow: Workflow) -> list[Release]:
    return list(
        session.scalars(
            select(Release).where(Release.workflow_id == workflow.id).order_by(Release.created_at.desc())
        )
    )
