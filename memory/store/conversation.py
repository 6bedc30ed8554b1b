"""Recent conversation turns per room, for context and follow-up resolution."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace as Inserted
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    Select,
    String,
    bindparam,
    delete,
    exists,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from memory.records import Answer, ConversationTurn, Role
from memory.store.schema import (
    MESSAGES,
    MessageRow,
    UTCDateTime,
    insert_unless,
    record_of,
    rowcount,
)


@dataclass(frozen=True, slots=True)
class Accepted:
    """A person's message as taken in: its turn, and its queued write (``None`` when they
    paused learning or the message was taken in before)."""

    turn_id: int
    source_message_id: str
    pending_id: int | None
    duplicate: bool = False


def to_turn(row: MessageRow | Row[Any] | Inserted) -> ConversationTurn:
    """A turn from its ORM row, a Core row of ``MESSAGES`` or the values just inserted."""
    return record_of(ConversationTurn, row, role=Role(row.role))


# The reply path's statements, built once: building one costs more than SQLite's run.
INSERT_TURN = insert(MESSAGES).returning(MESSAGES.c.id)
PERSON_MESSAGE = (
    MESSAGES.c.room == bindparam("room"),
    MESSAGES.c.author == bindparam("author"),
    MESSAGES.c.role == Role.USER.value,
    MESSAGES.c.platform_message_id == bindparam("platform_message_id"),
)
SAME_MESSAGE = (*PERSON_MESSAGE, MESSAGES.c.text == bindparam("text"))
# A person's message, unless it was taken in before (same platform id and text), in one
# statement: the intake is a trip through the event loop fewer.
INSERT_NEW_TURN = insert_unless(MESSAGES, *SAME_MESSAGE)
EARLIER_TURN = select(MESSAGES).where(*SAME_MESSAGE).order_by(MESSAGES.c.id).limit(1)
# One statement, so no forget slips between the check and the insert.
INSERT_ANSWER = insert(MESSAGES).from_select(
    ["room", "author", "role", "text", "created_at", "answer_to", "audience"],
    select(
        bindparam("room", type_=String()),
        bindparam("author", type_=String()),
        literal(Role.ASSISTANT.value),
        bindparam("text", type_=String()),
        bindparam("created_at", type_=UTCDateTime()),
        bindparam("answer_to", type_=Integer()),
        bindparam("audience", type_=String()),
    ).where(exists().where(MESSAGES.c.id == bindparam("answer_to"))),
)
PERSON_TURN = select(MESSAGES).where(*PERSON_MESSAGE).order_by(MESSAGES.c.id).limit(1)
RECENT_OF = (
    select(MESSAGES)
    .where(MESSAGES.c.room == bindparam("room"), MESSAGES.c.author == bindparam("author"))
    .order_by(MESSAGES.c.id.desc())
    .limit(bindparam("limit", type_=Integer()))
)


def recent_shared_query(*, for_audience: bool, since: bool) -> Select[Any]:
    """The last turns of a group room readable by everyone there (and by an audience)."""
    readable: ColumnElement[bool] = MESSAGES.c.audience.is_(None)
    if for_audience:
        readable = or_(readable, MESSAGES.c.audience == bindparam("audience"))
    query = select(MESSAGES).where(MESSAGES.c.room == bindparam("room"), readable)
    if since:
        query = query.where(MESSAGES.c.created_at >= bindparam("since", type_=UTCDateTime()))
    return query.order_by(MESSAGES.c.id.desc()).limit(bindparam("limit", type_=Integer()))


RECENT_SHARED = {
    (for_audience, since): recent_shared_query(for_audience=for_audience, since=since)
    for for_audience in (False, True)
    for since in (False, True)
}


class TurnRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def add(
        self,
        room: str,
        role: Role,
        text: str,
        *,
        author: str | None,
        created_at: datetime,
        platform_message_id: str | None = None,
        author_name: str | None = None,
        audience: str | None = None,
        answer_to: int | None = None,
    ) -> ConversationTurn:
        """``answer_to``: the person's turn a bot answer replies to (erased with it)."""
        values = {
            "room": room,
            "author": author,
            "role": role.value,
            "text": text,
            "created_at": created_at,
            "platform_message_id": platform_message_id,
            "author_name": author_name,
            "audience": audience,
            "answer_to": answer_to,
        }
        result = self.session.execute(INSERT_TURN, values)
        return to_turn(Inserted(id=int(result.scalar_one()), **values))

    def add_new(
        self,
        room: str,
        author: str,
        text: str,
        *,
        created_at: datetime,
        platform_message_id: str,
        author_name: str | None = None,
        audience: str | None = None,
    ) -> tuple[ConversationTurn, bool]:
        """A person's message as their turn, and True; or the turn that holds it already
        (same platform id and text: a message handed over twice), and False."""
        values = {
            "room": room,
            "author": author,
            "role": Role.USER.value,
            "text": text,
            "created_at": created_at,
            "platform_message_id": platform_message_id,
            "author_name": author_name,
            "audience": audience,
            "answer_to": None,
        }
        inserted = self.session.execute(INSERT_NEW_TURN, values).scalar_one_or_none()
        if inserted is not None:
            return to_turn(Inserted(id=int(inserted), **values)), True
        return to_turn(self.session.execute(EARLIER_TURN, values).one()), False

    def add_answer(self, answer: Answer) -> bool:
        """The bot's answer, in one statement with the check that the person's turn it
        answers is still there (no forget slips between them)."""
        values = {
            "room": answer.room,
            "author": answer.author,
            "text": answer.text,
            "created_at": answer.created_at,
            "answer_to": answer.answer_to,
            "audience": answer.audience,
        }
        return rowcount(self.session.execute(INSERT_ANSWER, values)) == 1

    def person_turn(
        self, room: str, author: str, platform_message_id: str
    ) -> ConversationTurn | None:
        """The person's turn with this platform id in this room, if it was stored."""
        values = {"room": room, "author": author, "platform_message_id": platform_message_id}
        row = self.session.execute(PERSON_TURN, values).one_or_none()
        return None if row is None else to_turn(row)

    def recent(self, room: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns of ``room``, oldest first."""
        query = (
            select(MessageRow)
            .where(MessageRow.room == room)
            .order_by(MessageRow.id.desc())
            .limit(limit)
        )
        rows = self.session.scalars(query).all()
        return [to_turn(row) for row in reversed(rows)]

    def recent_of(self, room: str, author: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns between ``author`` and the bot in ``room``, oldest first."""
        values = {"room": room, "author": author, "limit": limit}
        rows = self.session.execute(RECENT_OF, values).all()
        return [to_turn(row) for row in reversed(rows)]

    def recent_shared(
        self, room: str, *, audience: str | None, since: datetime | None, limit: int
    ) -> list[ConversationTurn]:
        """The last ``limit`` turns of a group room readable by ``audience`` (None: everyone)
        since ``since``, oldest first."""
        query = RECENT_SHARED[(audience is not None, since is not None)]
        values: dict[str, object] = {"room": room, "limit": limit}
        if audience is not None:
            values["audience"] = audience
        if since is not None:
            values["since"] = since
        rows = self.session.execute(query, values).all()
        return [to_turn(row) for row in reversed(rows)]

    def said(self, rooms: Sequence[str], platform_message_id: str) -> ConversationTurn | None:
        """The person's turn of the message with this platform id in one of ``rooms``."""
        query = (
            select(MessageRow)
            .where(
                MessageRow.room.in_(rooms),
                MessageRow.role == Role.USER.value,
                MessageRow.platform_message_id == platform_message_id,
            )
            .order_by(MessageRow.id)
            .limit(1)
        )
        row = self.session.scalars(query).one_or_none()
        return None if row is None else to_turn(row)

    def change_text(self, turn_id: int, text: str) -> None:
        self.session.execute(update(MessageRow).where(MessageRow.id == turn_id).values(text=text))

    def erase_of(self, room: str, author: str) -> int:
        """Erase ``author``'s turns in ``room`` and the bot's answers to them."""
        result = self.session.execute(
            delete(MessageRow).where(MessageRow.room == room, MessageRow.author == author)
        )
        return rowcount(result)

    def authors_in(self, room: str) -> list[str]:
        """Everyone with a turn in ``room``."""
        query = select(MessageRow.author).where(MessageRow.room == room).distinct()
        return [author for author in self.session.scalars(query).all() if author]

    def purge_older_than(self, cutoff: datetime) -> int:
        result = self.session.execute(delete(MessageRow).where(MessageRow.created_at < cutoff))
        return rowcount(result)
