"""The database: one async engine (SQLite in WAL mode, or PostgreSQL), and its errors translated."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from sqlalchemy import URL, Connection, Engine, create_engine, event, make_url
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import Session

from memory.errors import LockTimeoutError, StorageFullError, StoreError
from memory.priority import Priority
from memory.store.write_thread import Commit, WriteThread

T = TypeVar("T")

BUSY_TIMEOUT_MILLISECONDS = 5000
JOURNAL_SIZE_LIMIT_BYTES = 4 * 2**20
LOG_WAIT_SECONDS = 2.0
POSTGRES_DISK_FULL = "53100"
POSTGRES_LOCK_TIMEOUT = "55P03"
# Threads that each run a whole read job on a connection of their own (WAL: beside the writer).
SQLITE_READERS = 4


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


def _no_implicit_begin(dbapi_connection: Any, connection_record: Any) -> None:
    # pysqlite's own BEGIN off (it begins none before a SELECT): each engine below begins
    # its transactions itself.
    dbapi_connection.isolation_level = None


def _begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN")


def _begin_immediate(connection: Connection) -> None:
    # SQLite's write lock from the start (WAL: readers go on), not at the first write.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def create_read_engine(path: Path) -> Engine:
    """The engine of SQLite's reader threads: sync (a job runs whole in a thread), each
    job one transaction, so all it reads comes from one snapshot."""
    engine = create_engine(
        URL.create("sqlite+pysqlite", database=str(path)),
        pool_size=SQLITE_READERS,
        max_overflow=0,
        connect_args={"check_same_thread": False},
    )
    event.listen(engine, "connect", _set_sqlite_pragmas)
    event.listen(engine, "connect", _no_implicit_begin)
    event.listen(engine, "begin", _begin)
    return engine


def create_write_engine(path: Path) -> Engine:
    """The engine of SQLite's writer thread: sync (a job runs whole in the thread), its
    transactions begun with ``BEGIN IMMEDIATE``."""
    engine = create_engine(URL.create("sqlite+pysqlite", database=str(path)))
    event.listen(engine, "connect", _set_sqlite_pragmas)
    event.listen(engine, "connect", _no_implicit_begin)
    event.listen(engine, "begin", _begin_immediate)
    return engine


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
        engine = create_async_engine(url)
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

    SQLite has one writer, a thread that runs every write job (:meth:`run`) in priority
    order (:mod:`memory.store.write_thread`), so this process's writers never meet in
    SQLite's busy handler (which polls, is unfair, and fails with "database is locked" past
    ``busy_timeout``). It is the one place that batches: jobs waiting at once share one
    commit, and their index rows are written together after it, in commit order. Whatever
    else writes holds the writer meanwhile (:meth:`writing`). Reads run beside it, each job
    whole in one of a few reader threads on their own connections (:meth:`read`; WAL).
    PostgreSQL orders concurrent transactions itself.

    ``read_only`` opens an existing database without changing it (``mnemo doctor`` beside a
    running bot): no journal-mode switch, every write refused.
    """

    def __init__(self, location: Path | str | URL, *, read_only: bool = False) -> None:
        self.url = database_url(location)
        self.engine: AsyncEngine = create_engine_for(self.url, read_only=read_only)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # SQLite's writer and readers (a read-only file has neither: its writes fail).
        self.write_engine: Engine | None = None
        self._writer: WriteThread | None = None
        self.read_engine: Engine | None = None
        self._readers: ThreadPoolExecutor | None = None
        if self.dialect == "sqlite" and not read_only:
            self.write_engine = create_write_engine(self.path)
            self._writer = WriteThread(self.write_engine, translate=translate_error)
            self.read_engine = create_read_engine(self.path)
            self._readers = ThreadPoolExecutor(SQLITE_READERS, "mnemo-sqlite-reader")
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
        """This process's writer held inside, between two commits (SQLite); nothing on
        PostgreSQL."""
        if self._writer is None:
            yield
            return
        async with self._writer.hold(priority):
            yield

    async def run(self, job: Callable[[Session, Commit], T], priority: Priority) -> T:
        """``job``'s value once its transaction is committed and the index rows it left
        written. On SQLite the writer's thread runs it, maybe in one commit with the jobs
        waiting beside it; a job that fails is rolled back alone."""
        if self._writer is not None:
            return await self._writer.run(job, priority)
        commit = Commit()
        async with self.session() as session:
            value = await session.run_sync(lambda sync: job(sync, commit))
        await commit.after()
        return value

    async def read(self, job: Callable[[Session], T]) -> T:
        """``job``'s value, run in one transaction that only reads: on SQLite whole in a
        reader thread (one hand-over, however many statements), beside the writer."""
        if self._readers is None:
            async with self.session() as session:
                return await session.run_sync(job)
        try:
            reading = asyncio.get_running_loop().run_in_executor(self._readers, self._read, job)
        except RuntimeError as error:  # the readers were shut down by aclose
            raise StoreError("the store is closed: nothing more can be read") from error
        return await reading

    def _read(self, job: Callable[[Session], T]) -> T:
        try:
            with Session(self.read_engine, expire_on_commit=False) as session, session.begin():
                return job(session)
        except SQLAlchemyError as error:
            raise translate_error(error) from error

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session inside one transaction: committed on success, rolled back on error.
        On SQLite it only reads: the writer's thread writes (WAL: reads run beside it)."""
        try:
            async with self._sessions() as session, session.begin():
                yield session
        except SQLAlchemyError as error:
            raise translate_error(error) from error

    async def truncate_wal(self) -> None:
        """Copy the write-ahead log into the database and empty it, so that the older copies
        of deleted rows it holds are gone from the files (``secure_delete`` zeroes them in
        the database itself). The caller holds the store's writer: the checkpoint takes
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
        """Close once every job handed to the writer is committed, its index rows written
        (also of callers cancelled while they waited for the commit)."""
        if self._writer is not None:
            await self._writer.aclose()
        if self._readers is not None:
            await asyncio.to_thread(self._readers.shutdown)
        if self.read_engine is not None:
            self.read_engine.dispose()
        await self.engine.dispose()
