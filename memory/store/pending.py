"""The durable queue of messages waiting for memory extraction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from memory.records import PendingWrite
from memory.scope import Scope
from memory.store.schema import PendingWriteRow


def to_pending(row: PendingWriteRow) -> PendingWrite:
    return PendingWrite(
        id=row.id,
        owner=row.owner,
        room=row.room,
        text=row.text,
        message_time=row.message_time,
        source_message_id=row.source_message_id,
        attempts=row.attempts,
        next_attempt_at=row.next_attempt_at,
        last_error=row.last_error,
        created_at=row.created_at,
    )


class PendingWriteRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def enqueue(
        self,
        scope: Scope,
        text: str,
        *,
        message_time: datetime,
        now: datetime,
        source_message_id: str | None = None,
    ) -> PendingWrite:
        row = PendingWriteRow(
            owner=scope.owner,
            room=scope.room,
            text=text,
            message_time=message_time,
            source_message_id=source_message_id,
            attempts=0,
            next_attempt_at=now,
            created_at=now,
        )
        self.session.add(row)
        await self.session.flush()
        return to_pending(row)

    async def due(self, now: datetime, *, limit: int = 50) -> list[PendingWrite]:
        """Queued writes whose next attempt is due, oldest first."""
        query = (
            select(PendingWriteRow)
            .where(PendingWriteRow.next_attempt_at <= now)
            .order_by(PendingWriteRow.id)
            .limit(limit)
        )
        return [to_pending(row) for row in (await self.session.scalars(query)).all()]

    async def get(self, pending_id: int) -> PendingWrite | None:
        row = await self.session.get(PendingWriteRow, pending_id)
        return None if row is None else to_pending(row)

    async def count(self) -> int:
        return len((await self.session.scalars(select(PendingWriteRow.id))).all())

    async def reschedule(self, pending_id: int, *, error: str, next_attempt_at: datetime) -> None:
        row = await self.session.get(PendingWriteRow, pending_id)
        if row is not None:
            row.attempts += 1
            row.last_error = error
            row.next_attempt_at = next_attempt_at

    async def for_owner(self, owner: str) -> list[PendingWrite]:
        """Every queued write of one person, oldest first (they are processed in this order)."""
        query = (
            select(PendingWriteRow)
            .where(PendingWriteRow.owner == owner)
            .order_by(PendingWriteRow.id)
        )
        return [to_pending(row) for row in (await self.session.scalars(query)).all()]

    async def discard_for_scope(self, scope: Scope) -> int:
        """Drop the queued writes of one scope (after "forget all", so they cannot re-add)."""
        result = await self.session.execute(
            delete(PendingWriteRow).where(
                PendingWriteRow.owner == scope.owner, PendingWriteRow.room == scope.room
            )
        )
        return int(getattr(result, "rowcount", 0) or 0)

    async def complete(self, pending_id: int) -> None:
        """Drop a processed write; done in the same transaction as its facts, so never twice."""
        await self.session.execute(delete(PendingWriteRow).where(PendingWriteRow.id == pending_id))
