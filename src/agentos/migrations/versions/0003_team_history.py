"""A team's shared history: uploaded Ancha runs and their scenes, key roles and revocation,
releases that name their commit (and the uploaded run a gate read),
workspace quotas and Ancha servers, hosted console sessions and tasks.

Keys made before this revision keep every right they had: their role is ``admin``.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as keys:
        keys.add_column(sa.Column("role", sa.String(10), nullable=False, server_default="admin"))
        keys.add_column(sa.Column("name", sa.String(200), nullable=True))
        keys.add_column(sa.Column("revoked_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("workspaces") as workspaces:
        workspaces.add_column(sa.Column("quota_bytes", sa.BigInteger(), nullable=True))
        workspaces.add_column(sa.Column("ancha_server_url", sa.Text(), nullable=True))
        workspaces.add_column(sa.Column("ancha_server_key", sa.Text(), nullable=True))
    with op.batch_alter_table("releases") as releases:
        releases.add_column(sa.Column("commit", sa.String(64), nullable=True))
        releases.add_column(sa.Column("ancha_run_id", sa.String(255), nullable=True))
    op.create_table(
        "ancha_runs",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), sa.ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("uploaded_at", sa.DateTime(), nullable=False),
        sa.Column("completed_at", sa.DateTime(), nullable=True),
        sa.Column("commit", sa.String(64), nullable=True),
        sa.Column("branch", sa.String(255), nullable=True),
        sa.Column("ci_provider", sa.String(20), nullable=True),
        sa.Column("ci_url", sa.Text(), nullable=True),
        sa.Column("agent_version", sa.String(200), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("scenes", sa.Integer(), nullable=False),
        sa.Column("trials", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
        sa.Column("gate_met", sa.Boolean(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("uploaded_by", sa.String(12), nullable=True),
        sa.UniqueConstraint("workspace_id", "run_id", name="uq_ancha_runs_workspace_run"),
    )
    op.create_index("ix_ancha_runs_workspace_started", "ancha_runs", ["workspace_id", "status", "started_at"])
    op.create_index("ix_ancha_runs_workspace_branch", "ancha_runs", ["workspace_id", "branch", "started_at"])
    op.create_index("ix_ancha_runs_workspace_commit", "ancha_runs", ["workspace_id", "commit"])
    op.create_table(
        "ancha_scene_results",
        sa.Column("run_pk", sa.String(12), sa.ForeignKey("ancha_runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("scene", sa.String(100), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("run_id", sa.String(255), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("commit", sa.String(64), nullable=True),
        sa.Column("branch", sa.String(255), nullable=True),
        sa.Column("trials", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
        sa.Column("failed", sa.Integer(), nullable=False),
        sa.Column("invalid", sa.Integer(), nullable=False),
        sa.Column("pass_rate", sa.Float(), nullable=True),
        sa.Column("min_pass_rate", sa.Float(), nullable=True),
        sa.Column("gate_met", sa.Boolean(), nullable=False),
        sa.Column("outcomes", sa.String(2000), nullable=False),
        sa.Column("source_hash", sa.String(64), nullable=True),
    )
    op.create_index("ix_ancha_scene_results_scene", "ancha_scene_results", ["workspace_id", "scene", "started_at"])
    op.create_table(
        "console_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column("key_id", sa.String(12), sa.ForeignKey("api_keys.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_console_sessions_key_id", "console_sessions", ["key_id"])
    op.create_table(
        "console_tasks",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), sa.ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("scene", sa.String(100), nullable=False),
        sa.Column("scene_source", sa.Text(), nullable=False),
        sa.Column("task", sa.Text(), nullable=False),
        sa.Column("checks", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.Column("openings", sa.JSON(), nullable=False),
    )
    op.create_index("ix_console_tasks_workspace", "console_tasks", ["workspace_id", "updated_at"])


def downgrade() -> None:
    op.drop_table("console_tasks")
    op.drop_table("console_sessions")
    op.drop_table("ancha_scene_results")
    op.drop_table("ancha_runs")
    with op.batch_alter_table("releases") as releases:
        for column in ("ancha_run_id", "commit"):
            releases.drop_column(column)
    with op.batch_alter_table("workspaces") as workspaces:
        for column in ("ancha_server_key", "ancha_server_url", "quota_bytes"):
            workspaces.drop_column(column)
    with op.batch_alter_table("api_keys") as keys:
        for column in ("revoked_at", "name", "role"):
            keys.drop_column(column)
