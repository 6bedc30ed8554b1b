"""The schema of Mnemo before migrations (commit 3844196, made there by ``create_all``).

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    create_facts()
    create_fact_events()
    create_messages()
    create_pending_writes()
    op.create_table(
        "store_settings",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def create_facts() -> None:
    op.create_table(
        "facts",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("room", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("category", sa.String(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("valid_from", sa.DateTime(), nullable=True),
        sa.Column("valid_to", sa.DateTime(), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        sa.Column("source_message_id", sa.String(), nullable=True),
        sa.Column("embedding_model", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.ForeignKeyConstraint(["superseded_by"], ["facts.id"], ondelete="SET NULL"),
    )
    op.create_index("ix_facts_scope_status", "facts", ["owner", "room", "status"])


def create_fact_events() -> None:
    op.create_table(
        "fact_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("room", sa.String(), nullable=False),
        sa.Column("fact_id", sa.Integer(), nullable=True),
        sa.Column("related_fact_id", sa.Integer(), nullable=True),
        sa.Column("proposed_action", sa.String(), nullable=True),
        sa.Column("proposed_target", sa.String(), nullable=True),
        sa.Column("final_action", sa.String(), nullable=False),
        sa.Column("guard", sa.String(), nullable=True),
        sa.Column("old_text", sa.Text(), nullable=True),
        sa.Column("new_text", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("undone_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.ForeignKeyConstraint(["fact_id"], ["facts.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["related_fact_id"], ["facts.id"], ondelete="SET NULL"),
    )
    op.create_index("ix_fact_events_scope", "fact_events", ["owner", "room", "id"])
    op.create_index("ix_fact_events_fact", "fact_events", ["fact_id"])


def create_messages() -> None:
    op.create_table(
        "messages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("room", sa.String(), nullable=False),
        sa.Column("author", sa.String(), nullable=True),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("platform_message_id", sa.String(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_messages_room_time", "messages", ["room", "created_at"])


def create_pending_writes() -> None:
    op.create_table(
        "pending_writes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("room", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("message_time", sa.DateTime(), nullable=False),
        sa.Column("source_message_id", sa.String(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_pending_writes_due", "pending_writes", ["next_attempt_at"])
