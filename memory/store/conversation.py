"""Recent conversation turns per room, for context and follow-up resolution."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from memory.records import ConversationTurn, Role
from memory.store.schema import MessageRow


def to_turn(row: MessageRow) -> ConversationTurn:
    return ConversationTurn(
        id=row.id,
        room=row.room,
        author=row.author,
        role=Role(row.role),
        text=row.text,
        created_at=row.created_at,
        platform_message_id=row.platform_message_id,
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
    ) -> ConversationTurn:
        row = MessageRow(
            room=room,
            author=author,
            role=role.value,
            text=text,
            created_at=created_at,
            platform_message_id=platform_message_id,
        )
        self.session.add(row)
        await self.session.flush()
        return to_turn(row)

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

    async def purge_older_than(self, cutoff: datetime) -> int:
        result = await self.session.execute(
            delete(MessageRow).where(MessageRow.created_at < cutoff)
        )
        return int(getattr(result, "rowcount", 0) or 0)
