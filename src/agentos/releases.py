"""Releases and the evaluation gate.

A release of a workflow with a gate needs a completed evaluation of the workflow's
current version whose check pass-rate is at least the gate's `min_pass_rate`; otherwise
the attempt is recorded as `blocked` and answered 422 with the reason.

A gate may also require Ancha scenes to pass on the release's commit (``gate.ancha``): the
newest complete run uploaded for that commit (``ancha run --upload``) that ran every named
scene is the evaluation, and its pass rate over those scenes' judged trials must reach
``gate.ancha.min_pass_rate``. Such a release names its ``commit``.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentos.history.queries import newest_run_with
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


def ancha_verdict(session: Session, workflow: Workflow, commit: str | None) -> tuple[str | None, str | None]:
    """(why the scenes' gate blocks, the uploaded run it read); (None, run) when it may go."""
    gate = (workflow.gate or {}).get("ancha")
    if not gate:
        return None, None
    scenes: list[str] = gate["scenes"]
    required = float(gate["min_pass_rate"])
    if not commit:
        return ("ancha gate: the release names no commit, and the gate needs the pass rate of "
                f"{', '.join(scenes)} on it: send {{\"commit\": SHA}} — deployment blocked"), None
    found = newest_run_with(session, workflow.workspace_id, commit, scenes)
    if found is None:
        return (f"ancha gate: no run uploaded for commit {commit[:12]} ran {', '.join(scenes)}"
                " (upload one with `ancha run --upload`) — deployment blocked"), None
    run_id, passed, judged = found
    if judged == 0:
        return (f"ancha gate: run {run_id} of commit {commit[:12]} judged no trial of {', '.join(scenes)}"
                " — deployment blocked"), run_id
    rate = passed / judged
    if rate < required:
        return (f"ancha gate: pass rate {rate * 100:.1f}% of {', '.join(scenes)} in run {run_id} is below the"
                f" required {required * 100:.1f}% — deployment blocked"), run_id
    return None, run_id


def record_release(session: Session, workflow: Workflow, environment: str, commit: str | None = None) -> Release:
    """Record the attempt, released or blocked (its `detail` says why)."""
    evaluation = latest_completed_evaluation(session, workflow)
    blocked = gate_verdict(workflow, evaluation)
    scenes_blocked, ancha_run = ancha_verdict(session, workflow, commit)
    blocked = blocked or scenes_blocked
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
        commit=commit,
        ancha_run_id=ancha_run,
    )
    session.add(release)
    return release


def list_releases(session: Session, workflow: Workflow) -> list[Release]:
    return list(
        session.scalars(
            select(Release).where(Release.workflow_id == workflow.id).order_by(Release.created_at.desc())
        )
    )
