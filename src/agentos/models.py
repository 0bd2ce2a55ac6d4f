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
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
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


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(DateTime)


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "nodes": self.nodes,
            "checks": self.checks,
            "gate": self.gate,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "workflow_version": self.workflow_version,
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
        }


class Release(Base):
    __tablename__ = "releases"
    __table_args__ = (Index("ix_releases_workflow_created", "workflow_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(12), primary_key=True)
    workspace_id: Mapped[str] = mapped_column(String(12))
    workflow_id: Mapped[str] = mapped_column(String(12))
    environment: Mapped[str] = mapped_column(String(100))
    version: Mapped[int] = mapped_column(Integer)
    evaluation_id: Mapped[str | None] = mapped_column(String(12), nullable=True)
    status: Mapped[str] = mapped_column(String(10))
    detail: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "workflow_id": self.workflow_id,
            "environment": self.environment,
            "version": self.version,
            "evaluation_id": self.evaluation_id,
            "created_at": iso(self.created_at),
            "status": self.status,
            "detail": self.detail,
        }


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


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)
