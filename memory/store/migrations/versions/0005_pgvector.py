"""PostgreSQL: the facts' vectors in pgvector, beside the facts (nothing on SQLite).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import VECTOR

revision = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    context = op.get_context()
    if context.dialect.name != "postgresql":
        return
    if not context.as_sql:
        require_pgvector()
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "fact_vectors",
        sa.Column("fact_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("embedding", VECTOR(), nullable=False),
        sa.PrimaryKeyConstraint("fact_id"),
        sa.ForeignKeyConstraint(["fact_id"], ["facts.id"], ondelete="CASCADE"),
    )


def downgrade() -> None:
    """The vectors go; the extension stays (other databases on the server may use it)."""
    if op.get_context().dialect.name == "postgresql":
        op.drop_table("fact_vectors")


def require_pgvector() -> None:
    """Say what to do when the extension cannot be created here, instead of a bare error."""
    connection = op.get_bind()
    installed = connection.exec_driver_sql(
        "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
    ).first()
    if installed is not None:
        return
    available = connection.exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
    ).first()
    if available is None:
        raise RuntimeError(
            "this PostgreSQL server has no pgvector: use the pgvector/pgvector image, or "
            "install the server package (Debian: postgresql-<version>-pgvector)"
        )
    superuser = connection.exec_driver_sql(
        "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
    ).scalar()
    if not superuser:
        database = connection.exec_driver_sql("SELECT current_database()").scalar()
        raise RuntimeError(
            "pgvector is on the server but not in this database, and only a superuser may "
            f'add it: run CREATE EXTENSION vector; as a superuser in the database "{database}"'
        )
