"""Alert rules: a workflow's alert on one check's production pass rate, with its state
(resolved or firing) so a firing alert pages once.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "alert_rules",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("workflow_id", sa.String(12), sa.ForeignKey("workflows.id", ondelete="CASCADE"), nullable=False),
        sa.Column("check", sa.String(200), nullable=False),
        sa.Column("window", sa.Integer(), nullable=False),
        sa.Column("alpha", sa.Float(), nullable=False),
        sa.Column("notify", sa.JSON(), nullable=False),
        sa.Column("state", sa.String(10), nullable=False, server_default="resolved"),
        sa.Column("last_run_id", sa.String(12), nullable=True),
        sa.Column("pass_rate", sa.Float(), nullable=True),
        sa.Column("baseline", sa.Float(), nullable=True),
        sa.Column("p_value", sa.Float(), nullable=True),
        sa.Column("changed_at", sa.DateTime(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_alert_rules_workspace_id", "alert_rules", ["workspace_id"])
    op.create_index("ix_alert_rules_workflow_id", "alert_rules", ["workflow_id"])


def downgrade() -> None:
    op.drop_index("ix_alert_rules_workflow_id", "alert_rules")
    op.drop_index("ix_alert_rules_workspace_id", "alert_rules")
    op.drop_table("alert_rules")
