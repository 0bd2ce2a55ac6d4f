"""The service's tables. `to_dict()` gives each object's API wire shape.

Timestamps are naive UTC (see `timestamps.utcnow`). JSON columns hold what users wrote
(nodes, checks, inputs, state) as-is. Runs carry `evals_passed`/`evals_total` next to the
`evals` document so the dashboard aggregates them in SQL without parsing JSON.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from agentos.timestamps import iso


class Base(DeclarativeBase):
    pass


class Workspace(Base):
    __tablename__ = "workspaces"

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    quota_bytes: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    """Bytes of uploaded Ancha runs the workspace may keep (None: AGENTOS_WORKSPACE_QUOTA_BYTES, else no limit)."""
    ancha_server_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    """The Ancha server console tasks open their live worlds on."""
    ancha_server_key: Mapped[str | None] = mapped_column(Text, nullable=True)


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    role: Mapped[str] = mapped_column(String(10), default="admin", server_default="admin")
    """``viewer`` reads, ``ci`` also uploads runs, ``admin`` also manages keys and deletes runs."""
    name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "prefix": self.prefix, "role": self.role, "name": self.name,
                "created_at": iso(self.created_at), "revoked_at": iso(self.revoked_at)}


class Workflow(Base):
    __tablename__ = "workflows"
    __table_args__ = (UniqueConstraint("workspace_id", "name", name="uq_workflows_workspace_name"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    nodes: Mapped[list[Any]] = mapped_column(JSON)
    checks: Mapped[list[Any]] = mapped_column(JSON)
    gate: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    environments: Mapped[list[str] | None] = mapped_column(JSON, nullable=True)
    """The environments it declares (None: none, and runs run the current version); each runs
    the version last released to it (see ``agentos.deployments``). Not part of a version."""
    kind: Mapped[str] = mapped_column(String(10), default="graph", server_default="graph")
    """graph: the engine runs its nodes; external: an agent built elsewhere, whose runs are the
    traces it sends to POST /v1/traces (see ``agentos.telemetry.ingest``)."""

    def to_dict(self) -> dict[str, Any]:
        shape = {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "nodes": self.nodes,
            "checks": self.checks,
            "gate": self.gate,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }
        if self.kind == "external":  # graph workflows keep the reference's shape
            shape["type"] = "external"
        return shape


class WorkflowVersion(Base):
    """One row per version a workflow has had: what it ran with at that version."""

    __tablename__ = "workflow_versions"

    workflow_id: Mapped[str] = mapped_column(
        ForeignKey("workflows.id", ondelete="CASCADE"), primary_key=True
    )
    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    nodes: Mapped[list[Any]] = mapped_column(JSON)
    checks: Mapped[list[Any]] = mapped_column(JSON)
    gate: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)

    def to_dict(self) -> dict[str, Any]:
        return {
            "workflow_id": self.workflow_id,
            "version": self.version,
            "nodes": self.nodes,
            "checks": self.checks,
            "gate": self.gate,
            "created_at": iso(self.created_at),
        }


class Run(Base):
    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_workspace_created", "workspace_id", "created_at"),
        Index("ix_runs_workspace_workflow_created", "workspace_id", "workflow_id", "created_at"),
        Index("ix_runs_status", "status"),
        Index("ix_runs_evaluation", "evaluation_id"),
    )

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12))
    # No foreign key: runs outlive a deleted workflow and still count in the metrics.
    workflow_id: Mapped[str] = mapped_column(String(12))
    workflow_version: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(10))
    input: Mapped[dict[str, Any]] = mapped_column(JSON)
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    evals: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    evals_passed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evals_total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    evaluation_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    owner_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    environment: Mapped[str | None] = mapped_column(String(100), nullable=True)
    """The environment the run ran in: the one it named (or production) on a workflow that
    declares environments; None when it named a version, or its workflow declares none."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "workflow_version": self.workflow_version,
            **({"environment": self.environment} if self.environment is not None else {}),
            "status": self.status,
            "input": self.input,
            "state": self.state,
            "error": self.error,
            "cost_usd": self.cost_usd,
            "duration_ms": self.duration_ms,
            "started_at": iso(self.started_at),
            "finished_at": iso(self.finished_at),
            "evals": self.evals,
        }


class RunRollup(Base):
    """Finished runs of a workspace per day (the day each run was created), for the dashboard.

    Kept current in the transaction that finishes each run (see `agentos.rollups`). Each
    day is split over a few shards, so that concurrent completions rarely wait on one row.
    """

    __tablename__ = "run_rollups"

    workspace_id: Mapped[str] = mapped_column(String(12), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    shard: Mapped[int] = mapped_column(Integer, primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    evaluated: Mapped[int] = mapped_column(Integer, default=0)
    checks_passed: Mapped[int] = mapped_column(Integer, default=0)
    checks_total: Mapped[int] = mapped_column(Integer, default=0)


class _BreakdownKey:
    """The key of a breakdown rollup: a workspace's finished runs of one day (`span_days` 1) or
    of a block of 8 days (`span_days` 8, `day` its first), workflow version and environment
    ("" for none). In this order, so that a query's days are one or two ranges of the key."""

    # sort_order: these columns first in each table (and its key), before the table's own.
    workspace_id: Mapped[str] = mapped_column(String(12), primary_key=True, sort_order=-6)
    span_days: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=-5)
    day: Mapped[date] = mapped_column(Date, primary_key=True, sort_order=-4)
    workflow_id: Mapped[str] = mapped_column(String(12), primary_key=True, sort_order=-3)
    workflow_version: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=-2)
    environment: Mapped[str] = mapped_column(String(100), primary_key=True, sort_order=-1)


class RunMetricRollup(_BreakdownKey, Base):
    """Finished runs per day, workflow version and environment, for GET /api/metrics (see
    `agentos.rollups`); sharded as `run_rollups` is."""

    __tablename__ = "run_metric_rollups"

    shard: Mapped[int] = mapped_column(Integer, primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    succeeded: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    checks_passed: Mapped[int] = mapped_column(Integer, default=0)
    checks_total: Mapped[int] = mapped_column(Integer, default=0)


class RunLatencyRollup(_BreakdownKey, Base):
    """How many finished runs took each latency bucket (`agentos.rollups.latency_bucket`)."""

    __tablename__ = "run_latency_rollups"

    bucket_ms: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)


class RunCheckRollup(_BreakdownKey, Base):
    """How often each check was evaluated and passed, per day, workflow version and environment.

    Not sharded: a metrics query by check reads every row of its days, and eight shards made
    that eight times the rows, for little less waiting on a row."""

    __tablename__ = "run_check_rollups"

    check_name: Mapped[str] = mapped_column(String(200), primary_key=True)
    evaluated: Mapped[int] = mapped_column(Integer, default=0)
    passed: Mapped[int] = mapped_column(Integer, default=0)


class RunRollupQueue(Base):
    """Finished runs not counted in the breakdown rollups yet (`agentos.rollups.fold_pending`)."""

    __tablename__ = "run_rollup_queue"

    run_id: Mapped[str] = mapped_column(String(12), primary_key=True)


class RunEvent(Base):
    __tablename__ = "run_events"
    __table_args__ = (UniqueConstraint("run_id", "seq", name="uq_run_events_run_seq"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(12))
    seq: Mapped[int] = mapped_column(Integer)
    type: Mapped[str] = mapped_column(String(20))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)


class Evaluation(Base):
    __tablename__ = "evaluations"
    __table_args__ = (Index("ix_evaluations_workflow", "workflow_id", "workflow_version", "status"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12), index=True)
    workflow_id: Mapped[str] = mapped_column(String(12))
    workflow_version: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(10))
    status: Mapped[str] = mapped_column(String(10))
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    items_total: Mapped[int] = mapped_column(Integer)
    runs_succeeded: Mapped[int] = mapped_column(Integer, default=0)
    checks_passed: Mapped[int] = mapped_column(Integer, default=0)
    checks_total: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    per_check: Mapped[list[Any]] = mapped_column(JSON)
    items: Mapped[list[Any]] = mapped_column(JSON)
    owner_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    # Per scorer {name, type, mean, passed, total}; None when the evaluation named no scorers.
    scores: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    # The stored dataset (agentos.datasets) and its version the items came from; None: inline.
    dataset_name: Mapped[str | None] = mapped_column(String(200), nullable=True)
    dataset_version: Mapped[int | None] = mapped_column(Integer, nullable=True)

    @property
    def check_pass_rate(self) -> float | None:
        """Checks passed over checks evaluated across the evaluation's runs, a fraction 0..1."""
        if self.status != "completed" or not self.checks_total:
            return None
        return self.checks_passed / self.checks_total

    @property
    def success_rate(self) -> float | None:
        """Runs that succeeded over runs made, a fraction 0..1."""
        if self.status != "completed" or not self.items_total:
            return None
        return self.runs_succeeded / self.items_total

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "workflow_version": self.workflow_version,
            "name": self.name,
            "source": self.source,
            "status": self.status,
            "error": self.error,
            "check_pass_rate": _rounded(self.check_pass_rate, 6),
            "success_rate": _rounded(self.success_rate, 6),
            "cost_usd": round(self.cost_usd, 8),
            "checks_passed": self.checks_passed,
            "checks_total": self.checks_total,
            "items_total": self.items_total,
            "per_check": self.per_check,
            "items": self.items,
            "created_at": iso(self.created_at),
            "completed_at": iso(self.completed_at),
        } | ({"scores": self.scores} if self.scores is not None else {}) | (
            {"dataset": {"name": self.dataset_name, "version": self.dataset_version}}
            if self.dataset_name is not None else {}
        )


class Release(Base):
    __tablename__ = "releases"
    __table_args__ = (
        Index("ix_releases_workflow_created", "workflow_id", "created_at"),
        Index("ix_releases_workflow_environment", "workflow_id", "environment", "status", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12))
    workflow_id: Mapped[str] = mapped_column(String(12))
    environment: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    evaluation_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    commit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    ancha_run_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    """The uploaded Ancha run a gate with ``ancha`` read (see ``agentos.releases``)."""
    kind: Mapped[str] = mapped_column(String(10), default="release", server_default="release")
    """``release`` (through the gate) or ``rollback`` (back to the version released before)."""

    def to_dict(self) -> dict[str, Any]:
        shown = {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "environment": self.environment,
            "version": self.version,
            "evaluation_id": self.evaluation_id,
            "created_at": iso(self.created_at),
            "status": self.status,
            "detail": self.detail,
        }
        if self.commit is not None:  # the reference's shape stays as it is for releases without one
            shown |= {"commit": self.commit, "ancha_run_id": self.ancha_run_id}
        return shown


class ModelGrade(Base):
    """A grading model's answer to one prompt, kept so that evaluating again reads it instead
    of asking the model (a gate's decision can be reproduced). `key` hashes the workspace,
    provider, model and prompt."""

    __tablename__ = "model_grades"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12), index=True)
    model: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    cost_usd: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class ModelPrice(Base):
    """A workspace's override of the built-in price of a model, USD per million tokens."""

    __tablename__ = "model_prices"

    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(200), primary_key=True)
    input_per_mtok: Mapped[float] = mapped_column(Float)
    output_per_mtok: Mapped[float] = mapped_column(Float)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "input_per_mtok": self.input_per_mtok,
            "output_per_mtok": self.output_per_mtok,
        }


class ServerInstance(Base):
    """A live API process; runs it owns are failed when it is gone (see `instances`)."""

    __tablename__ = "server_instances"

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    label: Mapped[str] = mapped_column(String(300))
    started_at: Mapped[datetime] = mapped_column(DateTime)
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime)


class AnchaRun(Base):
    """A finished Ancha run uploaded to a workspace (``ancha push``): what ``summary.json``
    said, where it came from (commit, branch, CI job) and the files kept in the blob store
    under ``WORKSPACE/ID/``. It shows in the hosted console once ``complete``."""

    __tablename__ = "ancha_runs"
    __table_args__ = (
        UniqueConstraint("workspace_id", "run_id", name="uq_ancha_runs_workspace_run"),
        Index("ix_ancha_runs_workspace_started", "workspace_id", "status", "started_at"),
        Index("ix_ancha_runs_workspace_branch", "workspace_id", "branch", "started_at"),
        Index("ix_ancha_runs_workspace_commit", "workspace_id", "commit"),
    )

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(10))
    started_at: Mapped[datetime] = mapped_column(DateTime)
    uploaded_at: Mapped[datetime] = mapped_column(DateTime)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    commit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    branch: Mapped[str | None] = mapped_column(String(255), nullable=True)
    ci_provider: Mapped[str | None] = mapped_column(String(20), nullable=True)
    ci_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    agent_version: Mapped[str | None] = mapped_column(String(200), nullable=True)
    exit_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scenes: Mapped[int] = mapped_column(Integer)
    trials: Mapped[int] = mapped_column(Integer)
    passed: Mapped[int] = mapped_column(Integer)
    gate_met: Mapped[bool] = mapped_column(Boolean)
    bytes: Mapped[int] = mapped_column(BigInteger)
    manifest: Mapped[list[Any]] = mapped_column(JSON)
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    uploaded_by: Mapped[str | None] = mapped_column(String(12), nullable=True)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.run_id,
            "status": self.status,
            "started_at": iso(self.started_at),
            "uploaded_at": iso(self.uploaded_at),
            "completed_at": iso(self.completed_at),
            "commit": self.commit,
            "branch": self.branch,
            "ci": {"provider": self.ci_provider, "url": self.ci_url},
            "agent_version": self.agent_version,
            "exit_code": self.exit_code,
            "scenes": self.scenes,
            "trials": self.trials,
            "passed": self.passed,
            "gate_met": self.gate_met,
            "bytes": self.bytes,
        }


class AnchaSceneResult(Base):
    """One scene of an uploaded run: what the history pages query (commit, branch and start
    time are copied from the run, so a scene's history is one indexed range)."""

    __tablename__ = "ancha_scene_results"
    __table_args__ = (
        Index("ix_ancha_scene_results_scene", "workspace_id", "scene", "started_at"),
    )

    run_pk: Mapped[str] = mapped_column(ForeignKey("ancha_runs.id", ondelete="CASCADE"), primary_key=True)
    scene: Mapped[str] = mapped_column(String(100), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12))
    run_id: Mapped[str] = mapped_column(String(255))
    started_at: Mapped[datetime] = mapped_column(DateTime)
    commit: Mapped[str | None] = mapped_column(String(64), nullable=True)
    branch: Mapped[str | None] = mapped_column(String(255), nullable=True)
    trials: Mapped[int] = mapped_column(Integer)
    passed: Mapped[int] = mapped_column(Integer)
    failed: Mapped[int] = mapped_column(Integer)
    invalid: Mapped[int] = mapped_column(Integer)
    pass_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    min_pass_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    gate_met: Mapped[bool] = mapped_column(Boolean)
    outcomes: Mapped[str] = mapped_column(String(2000))
    """Each judged trial in trial order: ``P`` passed, ``F`` failed."""
    source_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)


class ConsoleSession(Base):
    """A hosted console sign-in: the cookie holds a random token, only its hash is stored."""

    __tablename__ = "console_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"), index=True)
    workspace_id: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(DateTime)
    expires_at: Mapped[datetime] = mapped_column(DateTime)


class ConsoleTask(Base):
    """A task written in the hosted console: a scene's world, a task and its checks (state and
    trace only), opened as a live world on the workspace's Ancha server and graded there."""

    __tablename__ = "console_tasks"
    __table_args__ = (Index("ix_console_tasks_workspace", "workspace_id", "updated_at"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    scene: Mapped[str] = mapped_column(String(100))
    scene_source: Mapped[str] = mapped_column(Text)
    task: Mapped[str] = mapped_column(Text)
    checks: Mapped[list[Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    openings: Mapped[list[Any]] = mapped_column(JSON)
    """Each time it was opened: the live world (server, env id), and its grade once graded."""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "scene": self.scene, "task": self.task, "checks": self.checks,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at), "openings": self.openings}


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


class AlertRule(Base):
    """A workflow's alert on one check's production pass rate (see agentos.alerts)."""

    __tablename__ = "alert_rules"

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12), index=True)
    workflow_id: Mapped[str] = mapped_column(ForeignKey("workflows.id", ondelete="CASCADE"), index=True)
    check: Mapped[str] = mapped_column(String(200))
    window: Mapped[int] = mapped_column(Integer)
    alpha: Mapped[float] = mapped_column(Float)
    notify: Mapped[list[Any]] = mapped_column(JSON)
    state: Mapped[str] = mapped_column(String(10), default="resolved", server_default="resolved")
    """resolved or firing; only the change from one to the other notifies."""
    last_run_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    """The newest run the rule was evaluated on (no new run: nothing to evaluate)."""
    pass_rate: Mapped[float | None] = mapped_column(Float, nullable=True)
    baseline: Mapped[float | None] = mapped_column(Float, nullable=True)
    p_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    changed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "check": self.check,
            "window": self.window,
            "alpha": self.alpha,
            "notify": self.notify,
            "state": self.state,
            "pass_rate": self.pass_rate,
            "baseline": self.baseline,
            "p_value": self.p_value,
            "changed_at": iso(self.changed_at),
            "created_at": iso(self.created_at),
        }


class Dataset(Base):
    """A stored list of evaluation items (see agentos.datasets); `version` goes up by one on
    every change, and its items at any version can be read back."""

    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("workspace_id", "name", name="uq_datasets_workspace_name"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "version": self.version,
                "created_at": iso(self.created_at), "updated_at": iso(self.updated_at)}


class DatasetItem(Base):
    """One item of a dataset, part of the versions from `added_in_version` up to (not
    including) `removed_in_version`; items are never changed, only added and removed."""

    __tablename__ = "dataset_items"
    __table_args__ = (Index("ix_dataset_items_dataset_version", "dataset_id", "added_in_version"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(String(12))
    item: Mapped[str] = mapped_column(Text)
    input: Mapped[dict[str, Any]] = mapped_column(JSON)
    expected: Mapped[Any] = mapped_column(JSON, nullable=True)
    has_expected: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    """Whether the item gives `expected` (which may itself be null)."""
    source_run_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    added_in_version: Mapped[int] = mapped_column(Integer)
    removed_in_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)

    def entry(self) -> dict[str, Any]:
        """The item as an evaluation dataset entry: {item, input, expected?}."""
        return {"item": self.item, "input": self.input} | ({"expected": self.expected} if self.has_expected else {})

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id} | self.entry() | {
            "source_run_id": self.source_run_id, "added_in_version": self.added_in_version,
            "created_at": iso(self.created_at)}
