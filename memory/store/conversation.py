"""Recent conversation turns per room, for context and follow-up resolution."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    String,
    delete,
    exists,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from memory.records import ConversationTurn, Role
from memory.store.schema import MESSAGES, MessageRow, UTCDateTime


def to_turn(row: MessageRow | Row[Any]) -> ConversationTurn:
    """A turn from its ORM row or from a Core row of ``MESSAGES``."""
    return ConversationTurn(
        id=row.id,
        room=row.room,
        author=row.author,
        role=Role(row.role),
        text=row.text,
        created_at=row.created_at,
        platform_message_id=row.platform_message_id,
        author_name=row.author_name,
        audience=row.audience,
        answer_to=row.answer_to,
    )


class TurnRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def add(
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
        result = await self.session.execute(
            insert(MESSAGES)
            .values(
                room=room,
                author=author,
                role=role.value,
                text=text,
                created_at=created_at,
                platform_message_id=platform_message_id,
                author_name=author_name,
                audience=audience,
                answer_to=answer_to,
            )
            .returning(MESSAGES.c.id)
        )
        return ConversationTurn(
            id=int(result.scalar_one()),
            room=room,
            author=author,
            role=role,
            text=text,
            created_at=created_at,
            platform_message_id=platform_message_id,
            author_name=author_name,
            audience=audience,
            answer_to=answer_to,
        )

    async def add_answer(
        self,
        room: str,
        text: str,
        *,
        author: str,
        created_at: datetime,
        answer_to: int,
        audience: str | None = None,
    ) -> bool:
        """The bot's answer to the person's turn ``answer_to``; nothing if that turn is gone
        (forgotten while the answer was composed). One statement, so no forget slips between
        the check and the insert."""
        values = select(
            literal(room),
            literal(author),
            literal(Role.ASSISTANT.value),
            literal(text),
            literal(created_at, UTCDateTime()),
            literal(answer_to),
            literal(audience, String()),
        ).where(exists().where(MessageRow.id == answer_to))
        columns = ["room", "author", "role", "text", "created_at", "answer_to", "audience"]
        result = await self.session.execute(insert(MessageRow).from_select(columns, values))
        return int(getattr(result, "rowcount", 0) or 0) == 1

    async def person_turn(
        self, room: str, author: str, platform_message_id: str
    ) -> ConversationTurn | None:
        """The person's turn with this platform id in this room, if it was stored."""
        query = (
            select(MESSAGES)
            .where(
                MESSAGES.c.room == room,
                MESSAGES.c.author == author,
                MESSAGES.c.role == Role.USER.value,
                MESSAGES.c.platform_message_id == platform_message_id,
            )
            .order_by(MESSAGES.c.id)
            .limit(1)
        )
        row = (await self.session.execute(query)).one_or_none()
        return None if row is None else to_turn(row)

    async def recent(self, room: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns of ``room``, oldest first."""
        query = (
            select(MessageRow)
            .where(MessageRow.room == room)
            .order_by(MessageRow.id.desc())
            .limit(limit)
        )
        rows = (await self.session.scalars(query)).all()
        return [to_turn(row) for row in reversed(rows)]

    async def recent_of(self, room: str, author: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns between ``author`` and the bot in ``room``, oldest first
        (the bot's answers carry the person they answered as author)."""
        query = select(MESSAGES).where(MESSAGES.c.room == room, MESSAGES.c.author == author)
        return await self._newest(query, limit)

    async def recent_shared(
        self, room: str, *, audience: str | None, since: datetime | None, limit: int
    ) -> list[ConversationTurn]:
        """The last ``limit`` turns of a group room that a reader in ``audience`` (None: the
        room as a whole) could read from ``since`` (None: all), oldest first."""
        readable: ColumnElement[bool] = MESSAGES.c.audience.is_(None)
        if audience is not None:
            readable = or_(readable, MESSAGES.c.audience == audience)
        query = select(MESSAGES).where(MESSAGES.c.room == room, readable)
        if since is not None:
            query = query.where(MESSAGES.c.created_at >= since)
        return await self._newest(query, limit)

    async def _newest(self, query: Select[Any], limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns ``query`` selects, oldest first."""
        newest = query.order_by(MESSAGES.c.id.desc()).limit(limit)
        rows = (await self.session.execute(newest)).all()
        return [to_turn(row) for row in reversed(rows)]

    async def said(self, rooms: Sequence[str], platform_message_id: str) -> ConversationTurn | None:
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
        row = (await self.session.scalars(query)).one_or_none()
        return None if row is None else to_turn(row)

    async def change_text(self, turn_id: int, text: str) -> None:
        await self.session.execute(
            update(MessageRow).where(MessageRow.id == turn_id).values(text=text)
        )

    async def erase_one(self, turn_id: int) -> None:
        await self.session.execute(delete(MessageRow).where(MessageRow.id == turn_id))

    async def erase_of(self, room: str, author: str) -> int:
        """Erase ``author``'s turns in ``room`` and the bot's answers to them."""
        result = await self.session.execute(
            delete(MessageRow).where(MessageRow.room == room, MessageRow.author == author)
        )
        return int(getattr(result, "rowcount", 0) or 0)

    async def authors_in(self, room: str) -> list[str]:
        """Everyone with a turn in ``room``."""
        query = select(MessageRow.author).where(MessageRow.room == room).distinct()
        return [author for author in (await self.session.scalars(query)).all() if author]

    async def purge_older_than(self, cutoff: datetime) -> int:
        result = await self.session.execute(
            delete(MessageRow).where(MessageRow.created_at < cutoff)
        )
        return int(getattr(result, "rowcount", 0) or 0)
