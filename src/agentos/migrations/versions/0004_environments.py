"""Environments and pinned versions: the environments a workflow declares, releases that are
rollbacks, and an index for the version an environment runs (its newest released release).

Workflows made before this revision declare no environments: their runs run the current
version, as before. Releases made before it are releases, not rollbacks.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-10
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workflows") as workflows:
        workflows.add_column(sa.Column("environments", sa.JSON(), nullable=True))
    with op.batch_alter_table("releases") as releases:
        releases.add_column(sa.Column("kind", sa.String(10), nullable=False, server_default="release"))
    op.create_index(
        "ix_releases_workflow_environment", "releases", ["workflow_id", "environment", "status", "created_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_releases_workflow_environment", table_name="releases")
    with op.batch_alter_table("releases") as releases:
        releases.drop_column("kind")
    with op.batch_alter_table("workflows") as workflows:
        workflows.drop_column("environments")
