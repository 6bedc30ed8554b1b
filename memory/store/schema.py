"""The tables (SQLite or PostgreSQL). They are the truth; the vector index is derived from them."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pgvector.sqlalchemy import VECTOR
from sqlalchemy import (
    Boolean,
    ColumnElement,
    DateTime,
    ForeignKey,
    Index,
    Insert,
    Integer,
    String,
    Table,
    Text,
    TypeDecorator,
    bindparam,
    exists,
    false,
    insert,
    select,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes as UTC and gives them back aware; SQLite would drop the zone."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to the store; use an aware UTC time")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.replace(tzinfo=UTC)


class Base(DeclarativeBase):
    pass


class FactRow(Base):
    __tablename__ = "facts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String, nullable=False)
    room: Mapped[str] = mapped_column(String, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    category: Mapped[str] = mapped_column(String, nullable=False, default="general")
    status: Mapped[str] = mapped_column(String, nullable=False, default="active")
    source: Mapped[str] = mapped_column(String, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    valid_from: Mapped[datetime | None] = mapped_column(UTCDateTime)
    valid_to: Mapped[datetime | None] = mapped_column(UTCDateTime)
    superseded_by: Mapped[int | None] = mapped_column(ForeignKey("facts.id", ondelete="SET NULL"))
    source_message_id: Mapped[str | None] = mapped_column(String)
    embedding_model: Mapped[str | None] = mapped_column(String)

    __table_args__ = (Index("ix_facts_scope_status", "owner", "room", "status"),)


class FactEventRow(Base):
    __tablename__ = "fact_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String, nullable=False)
    room: Mapped[str] = mapped_column(String, nullable=False)
    fact_id: Mapped[int | None] = mapped_column(ForeignKey("facts.id", ondelete="SET NULL"))
    related_fact_id: Mapped[int | None] = mapped_column(ForeignKey("facts.id", ondelete="SET NULL"))
    proposed_action: Mapped[str | None] = mapped_column(String)
    proposed_target: Mapped[str | None] = mapped_column(String)
    final_action: Mapped[str] = mapped_column(String, nullable=False)
    guard: Mapped[str | None] = mapped_column(String)
    old_text: Mapped[str | None] = mapped_column(Text)
    new_text: Mapped[str | None] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    undone_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The platform id of the message the pipeline decided on: forgetting a fact finds the
    # texts of that message's other events (raw model output, repeats) through it.
    source_message_id: Mapped[str | None] = mapped_column(String)

    __table_args__ = (
        Index("ix_fact_events_scope", "owner", "room", "id"),
        Index("ix_fact_events_fact", "fact_id"),
        Index("ix_fact_events_source", "owner", "source_message_id"),
    )


class MessageRow(Base):
    __tablename__ = "messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    room: Mapped[str] = mapped_column(String, nullable=False)
    author: Mapped[str | None] = mapped_column(String)
    role: Mapped[str] = mapped_column(String, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    platform_message_id: Mapped[str | None] = mapped_column(String)
    # The speaker's display name when it was said, for attributed group-room context.
    author_name: Mapped[str | None] = mapped_column(String)
    # A narrower place inside the room only its members can read (a private thread).
    audience: Mapped[str | None] = mapped_column(String)
    # The person's turn a bot answer replies to: erasing that turn erases its answer too.
    answer_to: Mapped[int | None] = mapped_column(
        ForeignKey("messages.id", ondelete="CASCADE", name="fk_messages_answer_to")
    )

    __table_args__ = (
        Index("ix_messages_room_time", "room", "created_at"),
        Index("ix_messages_source", "room", "author", "platform_message_id"),
        Index("ix_messages_answer_to", "answer_to"),
    )


class PendingWriteRow(Base):
    __tablename__ = "pending_writes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(String, nullable=False)
    room: Mapped[str] = mapped_column(String, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    message_time: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    source_message_id: Mapped[str | None] = mapped_column(String)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False)
    # The worker processing the row, until its lease ends (then another may claim it).
    claimed_by: Mapped[str | None] = mapped_column(String)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # An edit of an earlier message: its new text corrects what that message taught.
    corrects: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default=false()
    )

    __table_args__ = (
        Index("ix_pending_writes_due", "next_attempt_at"),
        Index("ix_pending_writes_owner", "owner", "id"),
    )


class SettingRow(Base):
    """Small key/value state of the store itself (schema version, last job runs)."""

    __tablename__ = "store_settings"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text, nullable=False)


class FactVectorRow(Base):
    """PostgreSQL only: a fact's vector, in the fact's transaction."""

    __tablename__ = "fact_vectors"

    fact_id: Mapped[int] = mapped_column(
        ForeignKey("facts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    model: Mapped[str] = mapped_column(String, nullable=False)
    # No fixed dimension: it is the embedding model's; rows of another are replaced.
    embedding: Mapped[Any] = mapped_column(VECTOR(), nullable=False)


# The tables themselves, for SQLAlchemy Core statements where the reply path reads and
# writes rows: no ORM objects, identity map or flush for a few plain rows.
FACTS = Base.metadata.tables[FactRow.__tablename__]
FACT_EVENTS = Base.metadata.tables[FactEventRow.__tablename__]
MESSAGES = Base.metadata.tables[MessageRow.__tablename__]
PENDING_WRITES = Base.metadata.tables[PendingWriteRow.__tablename__]
SETTINGS = Base.metadata.tables[SettingRow.__tablename__]


def insert_unless(table: Table, *found: ColumnElement[bool]) -> Insert:
    """One statement: a row of ``table`` from bind parameters named as its columns (all but
    ``id``), unless a row matches ``found``; it returns the new id, or no row."""
    columns = [column for column in table.c if column.name != "id"]
    values = select(*(bindparam(column.name, type_=column.type) for column in columns))
    return (
        insert(table)
        .from_select(columns, values.where(~exists().where(*found)))
        .returning(table.c.id)
    )


def rowcount(result: object) -> int:
    """How many rows an UPDATE or DELETE changed."""
    return int(getattr(result, "rowcount", 0) or 0)


Record = TypeVar("Record", bound="DataclassInstance")


def record_of(kind: type[Record], row: object, **converted: object) -> Record:
    """The record ``kind`` of a row whose columns carry its fields' names (an ORM row, a
    Core row, the values just inserted); ``converted`` are the fields read into their types."""
    values = {field.name: getattr(row, field.name) for field in dataclasses.fields(kind)}
    return kind(**(values | converted))
