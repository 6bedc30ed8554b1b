"""The SQLite store: the source of truth for facts, their events, turns and queued writes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import URL, select
from sqlalchemy.ext.asyncio import AsyncSession

from memory.store.conversation import TurnRepository
from memory.store.database import Database, database_url, read_only_sqlite_url, sqlite_url
from memory.store.erasure_gate import ErasureGate
from memory.store.facts import EventDraft, FactRepository, utc_now, visible_in
from memory.store.forgetting import Erased, ForgetRepository
from memory.store.migrations import require_current_schema, upgrade_schema
from memory.store.migrations.backup import delete_backups, expire_backups
from memory.store.pending import PendingWriteRepository
from memory.store.schema import SettingRow

__all__ = [
    "Database",
    "Erased",
    "ErasureGate",
    "EventDraft",
    "FactRepository",
    "ForgetRepository",
    "PendingWriteRepository",
    "Store",
    "StoreTransaction",
    "TurnRepository",
    "database_url",
    "read_only_sqlite_url",
    "sqlite_url",
    "utc_now",
    "visible_in",
]


@dataclass(frozen=True, slots=True)
class StoreTransaction:
    """The repositories of one transaction: all they do commits together or not at all."""

    session: AsyncSession
    facts: FactRepository
    turns: TurnRepository
    pending: PendingWriteRepository
    forget: ForgetRepository

    async def get_setting(self, key: str) -> str | None:
        row = await self.session.get(SettingRow, key)
        return None if row is None else row.value

    async def set_setting(self, key: str, value: str) -> None:
        row = await self.session.get(SettingRow, key)
        if row is None:
            self.session.add(SettingRow(key=key, value=value))
        else:
            row.value = value

    async def setting_keys(self, prefix: str) -> list[str]:
        query = select(SettingRow.key).where(SettingRow.key.startswith(prefix, autoescape=True))
        return list((await self.session.scalars(query)).all())


def repositories(session: AsyncSession) -> StoreTransaction:
    return StoreTransaction(
        session=session,
        facts=FactRepository(session),
        turns=TurnRepository(session),
        pending=PendingWriteRepository(session),
        forget=ForgetRepository(session),
    )


class Store:
    """Opens transactions on the database."""

    def __init__(self, database: Database) -> None:
        self.database = database
        # A forget's index erasure against reconcile's index writes (see ErasureGate).
        self.erasure = ErasureGate()

    @classmethod
    async def open(cls, location: Path | str | URL, *, migrate: bool = True) -> Store:
        """Open the database, upgrading its schema first (``migrate=False``: it must be current).

        A database made by a newer Mnemo is refused either way.
        """
        database = Database(location)
        try:
            if migrate:
                await upgrade_schema(database.url, database.engine)
            else:
                await require_current_schema(database.url, database.engine)
        except BaseException:
            await database.aclose()
            raise
        return cls(database)

    @classmethod
    def open_read_only(cls, location: Path | str | URL) -> Store:
        """An existing database, read beside the process that writes it; writes fail."""
        return cls(Database(location, read_only=True))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[StoreTransaction]:
        """A transaction that may write; this process's writing transactions take turns."""
        async with self.database.transaction() as session:
            yield repositories(session)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[StoreTransaction]:
        """A transaction that only reads: it waits for no writer (use it on the reply path)."""
        async with self.database.read() as session:
            yield repositories(session)

    async def scrub(self) -> None:
        """Make rows deleted so far unrecoverable from the database's files: called after a
        forget commits, before "done" is answered (see docs/write-queue.md, section 3). The
        copies made before schema upgrades hold them too: they are deleted."""
        await delete_backups(
            self.database.path,
            "a forget erased facts that it still held (forgotten means gone from every file)",
        )
        await self.database.truncate_wal()

    async def expire_backups(self, *, older_than: datetime) -> int:
        """Delete the copies made before schema upgrades that are older than ``older_than``
        (the storage job); how many were deleted."""
        return len(await expire_backups(self.database.path, older_than=older_than))

    async def aclose(self) -> None:
        await self.database.aclose()
