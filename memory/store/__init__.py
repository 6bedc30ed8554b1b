"""The store: the source of truth for facts, their events, turns and queued writes.

Every transaction that may write is a job run by :meth:`Store.write`: on SQLite by this
process's one writer (:mod:`memory.store.write_thread`). After the commit, before the next,
the index rows it changed are written (together with those of the jobs that shared the
commit) and, after a forget, the erased rows are removed from the index files and the
database's log: so the index follows the commit order, and nothing else needs a lock to
keep a forgotten fact out of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from sqlalchemy import URL, bindparam, select
from sqlalchemy.orm import Session

from memory.errors import StoreError
from memory.index.after_commit import AfterCommitWrites
from memory.index.base import IndexedFact, IndexWrites
from memory.pausing import PAUSED, RESUMED, pause_key
from memory.priority import Priority
from memory.records import Answer
from memory.store.conversation import Accepted, TurnRepository
from memory.store.database import Database, database_url, read_only_sqlite_url, sqlite_url
from memory.store.facts import EventDraft, FactRepository, utc_now
from memory.store.forgetting import Erased, ForgetRepository
from memory.store.migrations import require_current_schema, upgrade_schema
from memory.store.migrations.backup import delete_backups, expire_backups
from memory.store.pending import PendingWriteRepository
from memory.store.people_lock import lock_people
from memory.store.schema import SettingRow
from memory.store.vectors import PgVectorIndex, PgVectorWrites
from memory.store.write_thread import Commit

__all__ = [
    "PERSONAL_TABLES",
    "Accepted",
    "Database",
    "Erased",
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
]


log = logging.getLogger(__name__)
T = TypeVar("T")

# Built once: the intake of every message reads the person's pause with it.
SETTING_VALUE = select(SettingRow.value).where(SettingRow.key == bindparam("key"))
# The tables that hold what people said or what was learned from it.
PERSONAL_TABLES = ("facts", "fact_vectors", "fact_events", "messages", "pending_writes")


class WithoutIndex:
    """The index writes of a transaction opened without an index: any is a mistake."""

    def upsert(self, facts: Sequence[IndexedFact]) -> None:
        self._refuse()

    def delete(self, fact_ids: Sequence[int]) -> None:
        self._refuse()

    def erase(self, fact_ids: Sequence[int]) -> None:
        if fact_ids:
            self._refuse()

    def _refuse(self) -> None:
        raise StoreError(
            "this transaction changes the index but was opened without one: "
            "use store.write(job, index=...)"
        )


# How a transaction writes index rows: inside it (pgvector), after its commit, or never.
TransactionWrites = PgVectorWrites | AfterCommitWrites | WithoutIndex


def index_writes(session: Session, index: IndexWrites | None) -> TransactionWrites:
    if index is None:
        return WithoutIndex()
    if isinstance(index, PgVectorIndex):
        return index.writes_in(session)
    return AfterCommitWrites(index)


@dataclass(slots=True)
class StoreTransaction:
    """The repositories of one transaction: all they do commits together or not at all.

    ``index`` takes the vector rows of the facts it changes: written inside this transaction
    (pgvector) or after its commit (any other index).
    """

    session: Session
    facts: FactRepository
    turns: TurnRepository
    pending: PendingWriteRepository
    forget: ForgetRepository
    index: TransactionWrites
    # Set by :meth:`forgotten`: the files are scrubbed after the commit.
    scrub: bool = False

    def forgotten(self, fact_ids: Sequence[int]) -> None:
        """This transaction erases what a person asked to forget: after its commit, the
        facts' index rows leave every index file and the deleted rows the database's files,
        before the transaction's caller goes on (and answers "done")."""
        self.index.erase(fact_ids)
        self.scrub = True

    def lock_people(self, owners: Iterable[str]) -> None:
        """Hold these people's memory against other processes until this transaction ends
        (PostgreSQL; see :mod:`memory.store.people_lock`)."""
        lock_people(self.session, owners)

    def get_setting(self, key: str) -> str | None:
        value: str | None = self.session.execute(SETTING_VALUE, {"key": key}).scalar_one_or_none()
        return value

    def set_setting(self, key: str, value: str) -> None:
        row = self.session.get(SettingRow, key)
        if row is None:
            self.session.add(SettingRow(key=key, value=value))
        else:
            row.value = value

    def learning_paused(self, person: str) -> bool:
        return self.get_setting(pause_key(person)) == PAUSED

    def set_learning_paused(self, person: str, paused: bool) -> None:
        self.set_setting(pause_key(person), PAUSED if paused else RESUMED)


def repositories(session: Session, index: TransactionWrites) -> StoreTransaction:
    return StoreTransaction(
        session=session,
        facts=FactRepository(session),
        turns=TurnRepository(session),
        pending=PendingWriteRepository(session),
        forget=ForgetRepository(session),
        index=index,
    )


class Store:
    """Opens transactions on the database."""

    def __init__(self, database: Database) -> None:
        self.database = database

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

    async def write(
        self,
        job: Callable[[StoreTransaction], T],
        *,
        index: IndexWrites | None = None,
        priority: Priority = Priority.REPLY,
    ) -> T:
        """Run ``job``, a whole transaction that may write, in this process's turn to write
        (``REPLY``: someone waits for it; the write queue and maintenance pass
        ``BACKGROUND``), and return what it returns once it is committed. A job makes no
        model or network call: it holds the writer. On SQLite the writer's thread runs it,
        maybe in one commit with the jobs waiting beside it (:mod:`memory.store.write_thread`).

        With ``index``, the facts it changes are kept in step there too: written inside the
        transaction (pgvector), or after the commit, before this returns, together with the
        rows of the jobs that shared it. A failure there leaves the index behind, which is
        logged and repaired by reconcile; the committed change stands.
        """

        def run(session: Session, commit: Commit) -> T:
            writes = index_writes(session, index)
            transaction = repositories(session, writes)
            result = job(transaction)
            if isinstance(writes, AfterCommitWrites):
                commit.rows.add(writes)
            if transaction.scrub:
                commit.scrub = self._scrub_logged
            return result

        return await self.database.run(run, priority)

    async def add_answer(self, answer: Answer) -> bool:
        """The bot's answer; nothing if the person's turn it answers was forgotten meanwhile."""
        return await self.write(lambda transaction: transaction.turns.add_answer(answer))

    async def read(self, job: Callable[[StoreTransaction], T]) -> T:
        """Run ``job``, a transaction that only reads: it waits for no writer (use it on
        the reply path)."""
        return await self.database.read(lambda session: job(repositories(session, WithoutIndex())))

    async def scrub(self) -> None:
        """Make rows deleted so far unrecoverable from the database's files, holding the
        writer (a forget's job has it done right after its commit: :meth:`forgotten`)."""
        async with self.database.writing(Priority.REPLY):
            await self._scrub_files()

    async def _scrub_files(self) -> None:
        """After a forget commits, before "done" is answered (see docs/write-queue.md,
        section 3). The copies made before schema upgrades hold the rows too: they are
        deleted.

        PostgreSQL: VACUUM removes the deleted rows from the tables that hold a person's
        words; it cannot promise the bytes are overwritten (KNOWN_ISSUES.md says where
        they may remain). Its backups are the operator's own.
        """
        if self.database.dialect == "postgresql":
            await self.database.vacuum(PERSONAL_TABLES)
            return
        await delete_backups(
            self.database.path,
            "a forget erased facts that it still held (forgotten means gone from every file)",
        )
        await self.database.truncate_wal()

    async def _scrub_logged(self) -> None:
        try:
            await self._scrub_files()
        except StoreError as error:
            log.error(
                "a forget is committed, but the database's files still hold the old rows "
                "(%s); they are overwritten at the next checkpoint",
                error,
            )

    async def expire_backups(self, *, older_than: datetime) -> int:
        """Delete the copies made before schema upgrades that are older than ``older_than``
        (the storage job); how many were deleted. PostgreSQL: none are made."""
        if self.database.dialect == "postgresql":
            return 0
        return len(await expire_backups(self.database.path, older_than=older_than))

    async def aclose(self) -> None:
        await self.database.aclose()
