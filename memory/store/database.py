"""The database: one async engine (SQLite in WAL mode, or PostgreSQL), and its errors translated."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, event, make_url, text
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from memory.errors import LockTimeoutError, StorageFullError, StoreError
from memory.index.after_commit import IndexBatch
from memory.priority import Priority, Turns

BUSY_TIMEOUT_MILLISECONDS = 5000
JOURNAL_SIZE_LIMIT_BYTES = 4 * 2**20
LOG_WAIT_SECONDS = 2.0
POSTGRES_DISK_FULL = "53100"
POSTGRES_LOCK_TIMEOUT = "55P03"
# SQLite connections, all kept open (no overflow): fifty people at once use more than
# SQLAlchemy's five, and each one opened anew costs a thread, the pragmas (each a trip through
# the busy event loop) and SQLite reading the schema again.
SQLITE_POOL_SIZE = 30
# Store transactions sharing one commit, at most: a reply in the first waits for the others.
COMMIT_MEMBERS = 32
BEGIN_IMMEDIATE = text("BEGIN IMMEDIATE")
# Each member of a commit runs after a savepoint of this name, never released: SQLite rolls
# back to the latest of that name, and the COMMIT releases them all (one trip less a member).
SAVEPOINT = text("SAVEPOINT member")
ROLLBACK_TO_SAVEPOINT = text("ROLLBACK TO SAVEPOINT member")


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
        engine = create_async_engine(url, pool_size=SQLITE_POOL_SIZE, max_overflow=0)
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


@dataclass(eq=False)
class Commit:
    """Store transactions that share one SQLite commit: each ran in a savepoint of
    ``session``, one after the other, in the writer's turn. After the commit the index rows
    they changed are written and, after a forget, ``scrub`` runs; then ``done``."""

    session: AsyncSession
    rows: IndexBatch = field(default_factory=IndexBatch)
    scrub: Callable[[], Awaitable[None]] | None = None
    members: int = 0
    replies: bool = False
    # Why SQLite rolled the whole transaction back (a full disk does): every member fails.
    error: StoreError | None = None
    done: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    async def roll_back_member(self, error: BaseException) -> None:
        """After a member's failure: its own changes rolled back to its savepoint, and the
        rows it had not flushed dropped. If SQLite ended the whole transaction with it, the
        members before are lost too, not committed, and all fail with ``error``."""
        self.session.expunge_all()
        try:
            connection = await (await self.session.connection()).get_raw_connection()
            assert connection.driver_connection is not None
            if connection.driver_connection.in_transaction:
                await self.session.execute(ROLLBACK_TO_SAVEPOINT)
                return
        except SQLAlchemyError as rollback_error:
            error = rollback_error  # the member's changes are not undone: none is made
        if isinstance(error, SQLAlchemyError):
            self.error = translate_error(error)
        else:
            self.error = StoreError(f"the transaction was rolled back: {error}")


class Database:
    """Owns the engine and hands out sessions; one per process.

    SQLite has one writer: everything that writes takes a turn first, one at a time in
    priority order, so this process's writers never meet in SQLite's busy handler (which
    polls, is unfair, and fails with "database is locked" past ``busy_timeout``), and none
    commits between another's reads and writes. Reads run beside the writer on their own
    connections (WAL). PostgreSQL orders concurrent transactions itself: no turn is taken.

    The writer is the one place that batches: store transactions waiting for the turn at
    once share one commit (:meth:`transaction`), and their index rows are written together
    after it, in commit order, in the same turn.

    ``read_only`` opens an existing database without changing it (``mnemo doctor`` beside a
    running bot): no journal-mode switch, every write refused.
    """

    def __init__(self, location: Path | str | URL, *, read_only: bool = False) -> None:
        self.url = database_url(location)
        self.engine: AsyncEngine = create_engine_for(self.url, read_only=read_only)
        self._sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        # A read-only database has no writer to take turns of (its writes fail).
        self._turns = Turns() if self.dialect == "sqlite" and not read_only else None
        # The commit whose last member passed the turn on to the next store transaction.
        self._open: Commit | None = None
        self._finishing: set[asyncio.Task[None]] = set()
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

    async def open_connections(self) -> None:
        """Open every pooled SQLite connection now, while the bot is idle. Opened by the first
        burst of replies instead, each would cost its thread and pragmas, trips through the
        busy event loop that a reply's read waits for (docs/benchmarks.md, "The pool opened
        at start"). Nothing on PostgreSQL, whose pool grows and shrinks as it should, nor
        for a read-only file."""
        if self._turns is None:  # PostgreSQL, or a read-only SQLite file
            return
        opened = await asyncio.gather(
            *(self.engine.connect().start() for _ in range(SQLITE_POOL_SIZE)),
            return_exceptions=True,
        )
        for connection in opened:
            if isinstance(connection, AsyncConnection):
                await connection.close()
        failed = next((error for error in opened if isinstance(error, BaseException)), None)
        if isinstance(failed, SQLAlchemyError):
            raise translate_error(failed) from failed
        if failed is not None:
            raise failed

    @asynccontextmanager
    async def writing(self, priority: Priority) -> AsyncIterator[None]:
        """This process's turn to write (SQLite), held inside; nothing on PostgreSQL. A
        commit still open is finished first, its index rows written."""
        if self._turns is None:
            yield
            return
        async with self._turns.hold(priority):
            if self._open is not None:
                commit, self._open = self._open, None
                await _waited_through_cancel(self._finish_later(commit, release=False))
            yield

    @asynccontextmanager
    async def transaction(self, priority: Priority) -> AsyncIterator[Commit]:
        """A store transaction's session, in the commit it shares; left once that commit is
        made and its index rows written (or the failure raised). A transaction that fails
        is rolled back alone."""
        if self._turns is None:
            async with self.session() as session:
                commit = Commit(session)
                yield commit
            await commit.rows.write()
            if commit.scrub is not None:
                await commit.scrub()
            return
        commit = await self._join(priority)
        try:
            try:
                await commit.session.execute(SAVEPOINT)
                try:
                    yield commit
                    await commit.session.flush()
                except BaseException as error:
                    await commit.roll_back_member(error)
                    raise
            except SQLAlchemyError as error:
                # Once SQLite rolled back, the savepoint is gone too: say why it did.
                raise (commit.error or translate_error(error)) from error
        except BaseException:
            self._leave(commit)
            raise
        self._leave(commit)
        await asyncio.shield(commit.done)

    async def _join(self, priority: Priority) -> Commit:
        assert self._turns is not None
        try:
            await self._turns.acquire(priority)
        except asyncio.CancelledError:
            # A turn handed to this cancelled waiter went on; if to nobody, the commit left
            # open for it is finished here.
            if self._open is not None and self._turns.take():
                self._finish_later(self._open)
                self._open = None
            raise
        commit = self._open
        self._open = None
        if commit is None:
            commit = await self._begin()
        else:
            commit.session.expunge_all()  # each transaction reads the rows anew
        commit.members += 1
        commit.replies |= priority is Priority.REPLY
        return commit

    async def _begin(self) -> Commit:
        """A new commit, holding SQLite's write lock from its start (WAL: readers go on)."""
        assert self._turns is not None
        session = self._sessions()
        try:
            await session.execute(BEGIN_IMMEDIATE)
        except BaseException as error:
            await session.close()
            self._turns.release()
            if isinstance(error, SQLAlchemyError):
                raise translate_error(error) from error
            raise
        return Commit(session)

    def _leave(self, commit: Commit) -> None:
        """A member is done: the next waiting store transaction joins the commit, or it is
        made. A forget's commit is its last; a reply's is not held open for background
        work; and at most ``COMMIT_MEMBERS`` share one."""
        assert self._turns is not None
        joinable = commit.scrub is None and commit.error is None
        joinable = joinable and commit.members < COMMIT_MEMBERS
        if commit.replies and self._turns.next_priority is Priority.BACKGROUND:
            joinable = False
        if joinable and self._turns.pass_on():
            self._open = commit
            return
        self._finish_later(commit)

    def _finish_later(self, commit: Commit, *, release: bool = True) -> asyncio.Task[None]:
        """Make the commit in a task of its own, so that no caller's cancellation stops it
        halfway; the turn is released after it (``release``) or stays with the caller."""
        task = asyncio.create_task(self._finish(commit, release=release))
        self._finishing.add(task)
        task.add_done_callback(self._finishing.discard)
        return task

    async def _finish(self, commit: Commit, *, release: bool) -> None:
        assert self._turns is not None
        try:
            if commit.error is not None:
                await commit.session.close()
                raise commit.error
            try:
                await commit.session.commit()
            except SQLAlchemyError as error:
                raise translate_error(error) from error
            finally:
                await commit.session.close()
            await commit.rows.write()
            if commit.scrub is not None:
                await commit.scrub()
        except Exception as error:
            commit.done.set_exception(error)
            commit.done.exception()  # raised to the members that still wait, if any
        else:
            commit.done.set_result(None)
        finally:
            if not commit.done.done():
                commit.done.cancel()
            if release:
                self._turns.release()

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
        """Close once the transactions begun are committed, their index rows written (also
        of callers cancelled while they waited for the commit)."""
        async with self.writing(Priority.BACKGROUND):
            pass
        await self.engine.dispose()


async def _waited_through_cancel(task: asyncio.Task[None]) -> None:
    """Await ``task``; a cancelled caller still waits for it to end, then is cancelled."""
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise
