"""External workflows: a workflow's kind, graph (run by the engine) or external (its runs are
traces ingested through POST /v1/traces).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workflows") as batch:
        batch.add_column(sa.Column("kind", sa.String(10), nullable=False, server_default="graph"))


def downgrade() -> None:
    with op.batch_alter_table("workflows") as batch:
        batch.drop_column("kind")
