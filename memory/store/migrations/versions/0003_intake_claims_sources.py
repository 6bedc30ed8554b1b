"""Write-ahead intake, queue claims and forgetting by source message (issue 13).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None

LINK_EXISTING_ANSWERS = """
UPDATE messages SET answer_to = (
    SELECT MAX(person.id) FROM messages AS person
    WHERE person.role = 'user'
      AND person.room = messages.room
      AND person.author = messages.author
      AND person.id < messages.id
)
WHERE role = 'assistant' AND author IS NOT NULL
"""


def messages_0002() -> sa.Table:
    """The messages table of revision 0002, with its index."""
    table = sa.Table(
        "messages",
        sa.MetaData(),
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True, nullable=False),
        sa.Column("room", sa.String(), nullable=False),
        sa.Column("author", sa.String(), nullable=True),
        sa.Column("role", sa.String(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("platform_message_id", sa.String(), nullable=True),
        sa.Column("author_name", sa.String(), nullable=True),
        sa.Column("audience", sa.String(), nullable=True),
    )
    sa.Index("ix_messages_room_time", table.c.room, table.c.created_at)
    return table


def upgrade() -> None:
    # SQLite cannot add a foreign key to a table: batch rebuilds it (from the table as
    # revision 0002 left it, so that `mnemo migrate --sql` needs no live database).
    with op.batch_alter_table("messages", copy_from=messages_0002()) as batch:
        batch.add_column(sa.Column("answer_to", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            "fk_messages_answer_to", "messages", ["answer_to"], ["id"], ondelete="CASCADE"
        )
    op.execute(LINK_EXISTING_ANSWERS)
    op.create_index("ix_messages_source", "messages", ["room", "author", "platform_message_id"])
    op.create_index("ix_messages_answer_to", "messages", ["answer_to"])
    op.add_column("fact_events", sa.Column("source_message_id", sa.String(), nullable=True))
    op.create_index("ix_fact_events_source", "fact_events", ["owner", "source_message_id"])
    op.add_column("pending_writes", sa.Column("claimed_by", sa.String(), nullable=True))
    op.add_column("pending_writes", sa.Column("claimed_until", sa.DateTime(), nullable=True))
    op.create_index("ix_pending_writes_owner", "pending_writes", ["owner", "id"])


def downgrade() -> None:
    op.drop_index("ix_pending_writes_owner", table_name="pending_writes")
    with op.batch_alter_table("pending_writes") as batch:
        batch.drop_column("claimed_until")
        batch.drop_column("claimed_by")
    op.drop_index("ix_fact_events_source", table_name="fact_events")
    with op.batch_alter_table("fact_events") as batch:
        batch.drop_column("source_message_id")
    op.drop_index("ix_messages_answer_to", table_name="messages")
    op.drop_index("ix_messages_source", table_name="messages")
    with op.batch_alter_table("messages") as batch:
        batch.drop_constraint("fk_messages_answer_to", type_="foreignkey")
        batch.drop_column("answer_to")
