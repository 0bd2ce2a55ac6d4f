"""Evaluation scorers: the scores summary of an evaluation, and the grading models' answers
(kept by workspace, provider, model and prompt, so the same evaluation run again asks no
model twice and a gate's decision can be reproduced).

Evaluations made before this revision named no scorers: their `scores` is null and their
answer keeps the reference's shape.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("evaluations") as evaluations:
        evaluations.add_column(sa.Column("scores", sa.JSON(), nullable=True))
    op.create_table(
        "model_grades",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("input_tokens", sa.Integer(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_model_grades_workspace_id", "model_grades", ["workspace_id"])


def downgrade() -> None:
    op.drop_index("ix_model_grades_workspace_id", table_name="model_grades")
    op.drop_table("model_grades")
    with op.batch_alter_table("evaluations") as evaluations:
        evaluations.drop_column("scores")
