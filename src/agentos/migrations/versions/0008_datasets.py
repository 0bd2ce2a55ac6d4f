"""Datasets: stored, versioned lists of evaluation items (input, expected), filled by hand or
from runs (POST /api/runs/{id}/dataset); an evaluation may name one instead of an inline list
and records the dataset and version it used.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("workspace_id", sa.String(12), sa.ForeignKey("workspaces.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("workspace_id", "name", name="uq_datasets_workspace_name"),
    )
    op.create_table(
        "dataset_items",
        sa.Column("id", sa.String(12), primary_key=True),
        sa.Column("dataset_id", sa.String(12), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
        sa.Column("workspace_id", sa.String(12), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.Column("input", sa.JSON(), nullable=False),
        sa.Column("expected", sa.JSON(), nullable=True),
        sa.Column("has_expected", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("source_run_id", sa.String(12), nullable=True),
        sa.Column("added_in_version", sa.Integer(), nullable=False),
        sa.Column("removed_in_version", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_dataset_items_dataset_version", "dataset_items", ["dataset_id", "added_in_version"])
    with op.batch_alter_table("evaluations") as batch:
        batch.add_column(sa.Column("dataset_name", sa.String(200), nullable=True))
        batch.add_column(sa.Column("dataset_version", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("dataset_version")
        batch.drop_column("dataset_name")
    op.drop_index("ix_dataset_items_dataset_version", "dataset_items")
    op.drop_table("dataset_items")
    op.drop_table("datasets")
