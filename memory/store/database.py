"""The database: one async engine (SQLite in WAL mode, or PostgreSQL), and its errors translated."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, event, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from memory.errors import LockTimeoutError, StorageFullError, StoreError
from memory.index.after_commit import AfterCommitWrites, IndexBatch
from memory.priority import Priority, Turns

BUSY_TIMEOUT_MILLISECONDS = 5000
JOURNAL_SIZE_LIMIT_BYTES = 4 * 2**20
LOG_WAIT_SECONDS = 2.0
POSTGRES_DISK_FULL = "53100"
POSTGRES_LOCK_TIMEOUT = "55P03"
# SQLite connections kept open: fifty people at once use more than SQLAlchemy's five, and each
# one opened anew costs a thread, the pragmas and SQLite reading the schema again.
SQLITE_POOL_SIZE = 20


def _set_sqlite_pragmas(dbapi_connection: Any, connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets replies read while a background write is in progress.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MILLISECONDS}")
    # Deleted rows are overwritten with zeros, not left in free pages: forgetting is for good.
    cursor.execute("PRAGMA secure_delete=ON")
    # Free pages can be given back to the disk in small steps (memory/store/space.py); takes
    # effect on a new database, an existing one switches with one VACUUM.
    cursor.execute("PRAGMA auto_vacuum=INCREMENTAL")
    # After a checkpoint the log shrinks back to this instead of keeping its largest size.
    cursor.execute(f"PRAGMA journal_size_limit={JOURNAL_SIZE_LIMIT_BYTES}")
    cursor.close()


def _set_read_only_pragmas(dbapi_connection: Any, connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MILLISECONDS}")
    cursor.close()


def translate_error(error: SQLAlchemyError) -> StoreError:
    """Map a SQLAlchemy error to ours; a full disk gets its own type so callers can say so."""
    original = getattr(error, "orig", None)
    sqlite_full = isinstance(original, sqlite3.OperationalError) and "full" in str(original).lower()
    if sqlite_full or getattr(original, "sqlstate", None) == POSTGRES_DISK_FULL:
        return StorageFullError("the disk holding the database is full; nothing was written")
    if getattr(original, "sqlstate", None) == POSTGRES_LOCK_TIMEOUT:
        return LockTimeoutError(
            "the database is locked: another transaction held what this write needed for "
            f"{BUSY_TIMEOUT_MILLISECONDS / 1000:g} s; nothing was written"
        )
    if isinstance(error, OperationalError):
        return StoreError(f"the database could not be used: {original or error}")
    return StoreError(f"database error: {error}")


def sqlite_url(path: Path | str) -> URL:
    return URL.create("sqlite+aiosqlite", database=str(path))


def read_only_sqlite_url(path: Path | str) -> URL:
    """SQLite's own ``file:`` URI with ``mode=ro``: the file is never created or written.
    The path is quoted, so a folder named with ``?`` or ``#`` stays a name."""
    return URL.create(
        "sqlite+aiosqlite",
        database=f"file:{quote(str(path))}",
        query={"mode": "ro", "uri": "true"},
    )


def database_url(location: Path | str | URL) -> URL:
    """A URL as given, or a SQLite file's path made into one."""
    if isinstance(location, URL):
        return location
    if isinstance(location, str) and "://" in location:
        return make_url(location)
    return sqlite_url(location)


def create_engine_for(url: URL, *, read_only: bool = False) -> AsyncEngine:
    """The engine of one dialect: SQLite (one file, its pragmas) or PostgreSQL (asyncpg).

    ``read_only`` changes nothing in the database: SQLite opens the file read-only, and
    PostgreSQL's transactions are READ ONLY.
    """
    if url.get_backend_name() == "sqlite":
        if read_only:
            engine = create_async_engine(read_only_sqlite_url(str(url.database)))
            event.listen(engine.sync_engine, "connect", _set_read_only_pragmas)
            return engine
        engine = create_async_engine(url, pool_size=SQLITE_POOL_SIZE)
        event.listen(engine.sync_engine, "connect", _set_sqlite_pragmas)
        return engine
    if url.get_backend_name() == "postgresql":
        # A connection the server dropped (restart, idle timeout) is replaced, not handed out;
        # a row or table another transaction holds is waited for as long as SQLite waits.
        options = {"postgresql_readonly": True} if read_only else {}
        settings = {"lock_timeout": str(BUSY_TIMEOUT_MILLISECONDS)}
        return create_async_engine(
            url,
            pool_pre_ping=True,
            execution_options=options,
            connect_args={"server_settings": settings},
        )
    raise StoreError(f"unsupported database {url.get_backend_name()}: use SQLite or PostgreSQL")


class Database:
    """Owns the engine and hands out sessions; one per process.

    SQLite has one writer: everything that writes takes a turn first (:meth:`writing`), one
    at a time in priority order, so this process's writers never meet in SQLite's busy
    handler (which polls, is unfair, and fails with "database is locked" past
    ``busy_timeout``), and none commits between another's reads and writes. Reads run
    beside the writer on their own connections (WAL). PostgreSQL orders concurrent
    transactions itself: no turn is taken there.

    The writer is also the one place that batches the index writes made after commits
    (:meth:`after_commit`): store transactions that wait for the turn one behind the other
    write their index rows together, in commit order, when the last of them has committed.

    ``read_only`` opens an existing database without changing it (``mnemo doctor`` beside a
    running bot): no journal-mode switch, every write refused.
    """

    def __init__(self, location: Path | str | URL, *, read_only: bool = False) -> None:
        self.url = database_url(location)
        self.engine: AsyncEngine = create_engine_for(self.url, read_only=read_only)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._turns = Turns() if self.dialect == "sqlite" else None
        # The index writes of committed transactions not yet made, and the priority of the
        # turn queued to make them (None once it has begun).
        self._unwritten: IndexBatch | None = None
        self._queued: Priority | None = None
        self._queued_turn: asyncio.Task[None] | None = None
        # How long a truncation of the log waits for readers (replies read in milliseconds).
        self.log_wait_seconds = LOG_WAIT_SECONDS

    @property
    def dialect(self) -> str:
        return self.url.get_backend_name()

    @property
    def path(self) -> Path:
        """The SQLite file (the SQLite-only parts: space, log, backups)."""
        if self.dialect != "sqlite":
            raise StoreError(f"a {self.dialect} database has no file of its own")
        return Path(str(self.url.database))

    @asynccontextmanager
    async def writing(self, priority: Priority) -> AsyncIterator[None]:
        """This process's turn to write (SQLite), held inside; nothing on PostgreSQL. The
        index writes of the transactions committed before are made first."""
        async with self.committing(priority):
            await self._write_unwritten()
            yield

    @asynccontextmanager
    async def committing(self, priority: Priority) -> AsyncIterator[None]:
        """The turn of a store transaction: as :meth:`writing`, but the index writes still
        unwritten wait, for this transaction's to join them (:meth:`after_commit`)."""
        if self._turns is None:
            yield
            return
        async with self._turns.hold(priority):
            yield

    async def after_commit(
        self, writes: AfterCommitWrites, priority: Priority, *, now: bool
    ) -> asyncio.Future[None] | None:
        """In the turn of the transaction that committed ``writes``: its index rows join
        those still unwritten. They are all written now (None is returned) if ``now`` (a
        forget), if nobody waits for the turn, or if this reply's would wait behind
        background work; else after the transactions waiting now, in a turn queued behind
        them, and the future returned is done then. Whoever holds the turn before that and
        is not a store transaction writes them first (:meth:`writing`)."""
        if writes.empty and not now:
            return None
        batch = self._unwritten or IndexBatch()
        batch.add(writes)
        self._unwritten = batch
        behind_background = priority is Priority.REPLY and self._queued is Priority.BACKGROUND
        if self._turns is None or now or not self._turns.waited_for or behind_background:
            await self._write_unwritten()
            return None
        if self._queued is None:
            self._queued = priority
            self._queued_turn = asyncio.create_task(self._write_in_turn(priority))
        return batch.written

    async def _write_in_turn(self, priority: Priority) -> None:
        async with self.committing(priority):
            self._queued = None
            with contextlib.suppress(Exception):  # raised to the batch's transactions
                await self._write_unwritten()

    async def _write_unwritten(self) -> None:
        batch, self._unwritten = self._unwritten, None
        if batch is not None:
            await batch.write()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction: committed on success, rolled back on error.
        On SQLite only the store's writer opens one that writes (WAL: reads run beside it)."""
        try:
            async with self._sessions() as session, session.begin():
                yield session
        except SQLAlchemyError as error:
            raise translate_error(error) from error

    async def truncate_wal(self) -> None:
        """Copy the write-ahead log into the database and empty it, so that the older copies
        of deleted rows it holds are gone from the files (``secure_delete`` zeroes them in
        the database itself). The caller holds the store writer's turn: the checkpoint takes
        SQLite's write lock while it waits for readers.

        Raises :class:`StoreError` if it failed, e.g. a reader still used the log after
        ``log_wait_seconds``.
        """
        try:
            async with self.engine.connect() as connection:
                await connection.exec_driver_sql(
                    f"PRAGMA busy_timeout={round(self.log_wait_seconds * 1000)}"
                )
                try:
                    result = await connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                    busy = result.one()[0]
                finally:
                    await connection.exec_driver_sql(
                        f"PRAGMA busy_timeout={BUSY_TIMEOUT_MILLISECONDS}"
                    )
        except SQLAlchemyError as error:
            raise translate_error(error) from error
        if busy:
            raise StoreError(
                "the database's log could not be emptied: another connection kept reading "
                f"it for {self.log_wait_seconds:g} s; it is emptied at the next checkpoint"
            )

    async def vacuum(self, tables: Sequence[str], *, full: bool = False) -> None:
        """PostgreSQL's VACUUM of ``tables`` (outside a transaction, as it must run);
        ``full`` rewrites them, holding an exclusive lock on each while it does."""
        statement = ("VACUUM FULL " if full else "VACUUM ") + ", ".join(tables)
        try:
            async with self.engine.connect() as connection:
                autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
                await autocommit.exec_driver_sql(statement)
        except SQLAlchemyError as error:
            raise translate_error(error) from error

    async def aclose(self) -> None:
        if self._queued_turn is not None:
            await self._queued_turn  # index writes whose transactions' callers were cancelled
        await self.engine.dispose()
