"""Turns keep their speaker's display name and, inside a room, who could read them.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("author_name", sa.String(), nullable=True))
    op.add_column("messages", sa.Column("audience", sa.String(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("audience")
        batch.drop_column("author_name")
