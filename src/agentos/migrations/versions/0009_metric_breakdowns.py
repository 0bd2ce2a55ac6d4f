"""Metrics breakdowns: the environment a run ran in, and rollups of finished runs per day,
workflow version and environment (counts and cost, latency buckets, each check's passes),
filled from the runs stored so far.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from agentos.rollups import rebuild_breakdowns

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _key() -> list[sa.Column[object]]:
    return [
        sa.Column("workspace_id", sa.String(12), primary_key=True),
        sa.Column("span_days", sa.Integer(), primary_key=True),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("workflow_id", sa.String(12), primary_key=True),
        sa.Column("workflow_version", sa.Integer(), primary_key=True),
        sa.Column("environment", sa.String(100), primary_key=True),
    ]


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("environment", sa.String(100), nullable=True))
    op.create_table(
        "run_metric_rollups",
        *_key(),
        sa.Column("shard", sa.Integer(), primary_key=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("succeeded", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("checks_passed", sa.Integer(), nullable=False),
        sa.Column("checks_total", sa.Integer(), nullable=False),
    )
    op.create_table(
        "run_latency_rollups",
        *_key(),
        sa.Column("bucket_ms", sa.BigInteger(), primary_key=True),
        sa.Column("runs", sa.Integer(), nullable=False),
    )
    op.create_table(
        "run_check_rollups",
        *_key(),
        sa.Column("check_name", sa.String(200), primary_key=True),
        sa.Column("evaluated", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
    )
    op.create_table("run_rollup_queue", sa.Column("run_id", sa.String(12), primary_key=True))
    # Runs finished before this migration (they ran in no recorded environment).
    rebuild_breakdowns(op.get_bind())


def downgrade() -> None:
    op.drop_table("run_rollup_queue")
    op.drop_table("run_check_rollups")
    op.drop_table("run_latency_rollups")
    op.drop_table("run_metric_rollups")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("environment")
