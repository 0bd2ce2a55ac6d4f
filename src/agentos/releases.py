"""Releases, rollbacks and the evaluation gate.

A release pins a version (the current one unless it names another) to an environment. With
a gate, it needs a completed evaluation of that version whose check pass-rate is at least
the gate's `min_pass_rate` (the workflow's gate as it is now, whichever version is
released); otherwise the attempt is recorded as `blocked` and answered 422 with the reason.
A workflow that declares environments is released only to one of them, and each runs the
version released to it last (``agentos.deployments``); a rollback goes back to the version
it ran before.

A gate may also require scorers' mean scores (``gate.scorers``, {name: min mean}) in that
evaluation: one it did not score with blocks, as does a mean below the minimum.

A gate may also require Ancha scenes to pass on the release's commit (``gate.ancha``): the
newest complete run uploaded for that commit (``ancha run --upload``) that ran every named
scene is the evaluation, and its pass rate over those scenes' judged trials must reach
``gate.ancha.min_pass_rate``. Such a release names its ``commit``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from agentos.deployments import no_such_version, require_declared
from agentos.errors import Conflict
from agentos.history.queries import newest_run_with
from agentos.ids import new_id
from agentos.models import Evaluation, Release, Workflow, WorkflowVersion
from agentos.timestamps import utcnow


def latest_completed_evaluation(session: Session, workflow: Workflow, version: int) -> Evaluation | None:
    return session.scalar(
        select(Evaluation)
        .where(
            Evaluation.workflow_id == workflow.id,
            Evaluation.workflow_version == version,
            Evaluation.status == "completed",
        )
        .order_by(Evaluation.completed_at.desc(), Evaluation.created_at.desc())
        .limit(1)
    )


def gate_verdict(workflow: Workflow, evaluation: Evaluation | None, version: int) -> str | None:
    """Why the gate blocks the release of `version`, or None when it may go."""
    gate = workflow.gate or {}
    if gate.get("min_pass_rate") is None and not gate.get("scorers"):
        return None
    if evaluation is None:
        return f"eval gate: no completed evaluation of version {version} — deployment blocked"
    if gate.get("min_pass_rate") is None:
        return scorers_verdict(gate["scorers"], evaluation, version)
    required = float(gate["min_pass_rate"])
    rate = evaluation.check_pass_rate
    if rate is None:
        return (
            f"eval gate: evaluation {evaluation.id} of version {version} evaluated no checks"
            " — deployment blocked"
        )
    if rate < required:
        return (
            f"eval gate: check pass-rate {rate * 100:.1f}% is below the required {required * 100:.1f}%"
            " — deployment blocked"
        )
    return scorers_verdict(gate.get("scorers") or {}, evaluation, version)


def scorers_verdict(required: dict[str, float], evaluation: Evaluation, version: int) -> str | None:
    """Why the scorers' part of the gate ({name: min mean}) blocks, or None."""
    means = {s["name"]: s["mean"] for s in evaluation.scores or []}
    for name, low in required.items():
        mean = means.get(name)
        if name not in means:
            return (f"eval gate: evaluation {evaluation.id} of version {version} has no scorer '{name}'"
                    f" (evaluate it with a scorer named '{name}') — deployment blocked")
        if mean is None or mean < low:
            shown = "none" if mean is None else f"{mean:.2f}"
            return f"eval gate: scorer '{name}' mean {shown} is below the required {low:.2f} — deployment blocked"
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


def record_release(
    session: Session, workflow: Workflow, environment: str, commit: str | None = None, version: int | None = None
) -> Release:
    """Record the attempt to release `version` (default: the current one), released or
    blocked (its `detail` says why). An environment the workflow does not declare (422) and
    a version it never had (404) are refused without a record."""
    require_declared(workflow.name, workflow.environments, environment)
    version = workflow.version if version is None else version
    if version != workflow.version and session.get(WorkflowVersion, (workflow.id, version)) is None:
        raise no_such_version(workflow.name, version, workflow.version)
    evaluation = latest_completed_evaluation(session, workflow, version)
    blocked = gate_verdict(workflow, evaluation, version)
    scenes_blocked, ancha_run = ancha_verdict(session, workflow, commit)
    blocked = blocked or scenes_blocked
    release = Release(
        id=new_id(),
        workspace_id=workflow.workspace_id,
        workflow_id=workflow.id,
        environment=environment,
        version=version,
        evaluation_id=evaluation.id if evaluation is not None else None,
        status="blocked" if blocked else "released",
        detail=blocked,
        created_at=utcnow(),
        commit=commit,
        ancha_run_id=ancha_run,
        kind="release",
    )
    session.add(release)
    return release


def roll_back(session: Session, workflow: Workflow, environment: str) -> Release:
    """Pin the version `environment` ran before its last release, as a new release (status
    `released`, no gate: it ran there already), whose `detail` says from which version to
    which. Rolling back again goes one release further back."""
    require_declared(workflow.name, workflow.environments, environment)
    if not workflow.environments:
        raise Conflict(
            f"Workflow '{workflow.name}' declares no environments, so its runs run the current version and no"
            f" release can be rolled back: declare environments (PATCH /api/workflows/{workflow.id} with"
            f" {{\"environments\": [\"{environment}\"]}}), or run an earlier version by number ({{\"version\": N}})"
        )
    # One rollback at a time per workflow (PostgreSQL; SQLite's writes are serialised anyway).
    session.execute(select(Workflow.id).where(Workflow.id == workflow.id).with_for_update())
    released = session.scalars(
        select(Release)
        .where(Release.workflow_id == workflow.id, Release.environment == environment, Release.status == "released")
        .order_by(Release.created_at)
    ).all()
    pinned = pinned_history(released)
    if not pinned:
        raise Conflict(f"Nothing to roll back in {environment}: no version of workflow '{workflow.name}'"
                       f" has been released to {environment}")
    if len(pinned) == 1:
        raise Conflict(f"Nothing to roll back in {environment}: version {pinned[0]} is the first version of"
                       f" workflow '{workflow.name}' released to {environment}, and no earlier one ran there")
    current, previous = pinned[-1], pinned[-2]
    rollback = Release(
        id=new_id(),
        workspace_id=workflow.workspace_id,
        workflow_id=workflow.id,
        environment=environment,
        version=previous,
        evaluation_id=None,
        status="released",
        detail=f"rollback of {environment} from v{current} to v{previous}",
        created_at=utcnow(),
        kind="rollback",
    )
    session.add(rollback)
    return rollback


def pinned_history(released: Sequence[Release]) -> list[int]:
    """The versions an environment ran, oldest first, ending with the one it runs, from its
    released releases oldest first: a release pins its version (unless it runs already), a
    rollback undoes the release before it."""
    pinned: list[int] = []
    for release in released:
        if release.kind == "rollback" and pinned:
            pinned.pop()
        # What a rollback went back to is what ran before it, so this adds nothing then; it
        # still makes the last entry the newest release's version, which is what runs.
        if not pinned or pinned[-1] != release.version:
            pinned.append(release.version)
    return pinned


def list_releases(session: Session, workflow: Workflow) -> list[Release]:
    return list(
        session.scalars(
            select(Release).where(Release.workflow_id == workflow.id).order_by(Release.created_at.desc())
        )
    )
