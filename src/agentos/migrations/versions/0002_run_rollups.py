"""Daily rollups of finished runs (run_rollups), filled from the runs stored so far.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_rollups",
        sa.Column("workspace_id", sa.String(12), primary_key=True),
        sa.Column("day", sa.Date(), primary_key=True),
        sa.Column("shard", sa.Integer(), primary_key=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("succeeded", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("evaluated", sa.Integer(), nullable=False),
        sa.Column("checks_passed", sa.Integer(), nullable=False),
        sa.Column("checks_total", sa.Integer(), nullable=False),
    )
    # Runs finished before this migration, all in shard 0.
    op.execute(
        "INSERT INTO run_rollups (workspace_id, day, shard, runs, succeeded, cost_usd, evaluated,"
        " checks_passed, checks_total)"
        " SELECT workspace_id, date(created_at), 0, count(*),"
        " sum(CASE WHEN status = 'success' THEN 1 ELSE 0 END), coalesce(sum(cost_usd), 0),"
        " count(evals_total), coalesce(sum(evals_passed), 0), coalesce(sum(evals_total), 0)"
        " FROM runs WHERE status IN ('success', 'failed') GROUP BY workspace_id, date(created_at)"
    )


def downgrade() -> None:
    op.drop_table("run_rollups")
