"""Initial schema: workspaces, keys, workflows and versions, runs and events,
evaluations, releases, price overrides, server instances.

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column(
            "workspace_id", sa.String(12), sa.ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(20), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_api_keys_workspace_id", "api_keys", ["workspace_id"])
    op.create_table(
        "workflows",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column(
            "workspace_id", sa.String(12), sa.ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("gate", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("workspace_id", "name", name="uq_workflows_workspace_name"),
    )
    op.create_index("ix_workflows_workspace_id", "workflows", ["workspace_id"])
    op.create_table(
        "workflow_versions",
        sa.Column(
            "workflow_id",
            sa.String(12),
            sa.ForeignKey("workflows.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("version", sa.Integer(), primary_key=True),
        sa.Column("nodes", sa.JSON(), nullable=False),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("gate", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("workflow_id", sa.String(12), nullable=False),
        sa.Column("workflow_version", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("input", sa.JSON(), nullable=False),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("evals", sa.JSON(), nullable=True),
        sa.Column("evals_passed", sa.Integer(), nullable=True),
        sa.Column("evals_total", sa.Integer(), nullable=True),
        sa.Column("evaluation_id", sa.String(12), nullable=True),
        sa.Column("owner_id", sa.String(12), nullable=True),
    )
    op.create_index("ix_runs_workspace_created", "runs", ["workspace_id", "created_at"])
    op.create_index(
        "ix_runs_workspace_workflow_created", "runs", ["workspace_id", "workflow_id", "created_at"]
    )
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_index("ix_runs_evaluation", "runs", ["evaluation_id"])
    op.create_table(
        "run_events",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(12), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(20), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="uq_run_events_run_seq"),
    )
    op.create_table(
        "evaluations",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("workflow_id", sa.String(12), nullable=False),
        sa.Column("workflow_version", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("items_total", sa.Integer(), nullable=False),
        sa.Column("runs_succeeded", sa.Integer(), nullable=False),
        sa.Column("checks_passed", sa.Integer(), nullable=False),
        sa.Column("checks_total", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("per_check", sa.JSON(), nullable=False),
        sa.Column("items", sa.JSON(), nullable=False),
        sa.Column("owner_id", sa.String(12), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("completed_at", sa.DateTime(), nullable=True),
    )
    op.create_index("ix_evaluations_workspace_id", "evaluations", ["workspace_id"])
    op.create_index(
        "ix_evaluations_workflow", "evaluations", ["workflow_id", "workflow_version", "status"]
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("workflow_id", sa.String(12), nullable=False),
        sa.Column("environment", sa.String(100), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("evaluation_id", sa.String(12), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_releases_workflow_created", "releases", ["workflow_id", "created_at"])
    op.create_table(
        "model_prices",
        sa.Column(
            "workspace_id",
            sa.String(12),
            sa.ForeignKey("workspaces.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("model", sa.String(200), primary_key=True),
        sa.Column("input_per_mtok", sa.Float(), nullable=False),
        sa.Column("output_per_mtok", sa.Float(), nullable=False),
    )
    op.create_table(
        "server_instances",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("label", sa.String(300), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    for table in (
        "server_instances",
        "model_prices",
        "releases",
        "evaluations",
        "run_events",
        "runs",
        "workflow_versions",
        "workflows",
        "api_keys",
        "workspaces",
    ):
        op.drop_table(table)
