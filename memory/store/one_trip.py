"""Short writing transactions run whole in one call: the reply path's intake and answer.

Through the async engine a transaction is one trip to SQLite's thread per statement, and each
trip waits its turn on the event loop. Under load (fifty people at once) a reply's intake of
five statements held the store's write lock for all those turns while the other replies
queued behind it: the write lock was busy most of the time with replies waiting for each
other (docs/benchmarks.md, "Load"). Here a transaction is a plain function over a
synchronous SQLAlchemy ``Connection``, run whole on a thread of its own: one hop per
transaction, and the lock is held for SQLite's own time.

PostgreSQL (and a read-only SQLite) run the same function through the async engine
(``run_sync``): the same statements, awaited one by one, where the server does the waiting.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from sqlalchemy import URL, Connection, Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine

Result = TypeVar("Result")
# A transaction's statements and what it returns; committed if it returns, rolled back if
# it raises.
Work = Callable[[Connection], Result]


class OneTripWriter(Protocol):
    async def run(self, work: Work[Result]) -> Result: ...

    async def dispose(self) -> None:
        """Close the connections it keeps; the next transaction opens a new one."""

    async def aclose(self) -> None: ...


class ThreadWriter:
    """SQLite: each transaction in one call on a single thread with its own connection.

    The caller holds the store's write lock, so one transaction runs at a time; if the
    caller is cancelled meanwhile it waits for the thread to finish the transaction (it
    commits or rolls back either way), so the lock is not passed on while SQLite still
    writes.
    """

    def __init__(self, url: URL, on_connect: Callable[[Any, Any], None]) -> None:
        self.engine: Engine = create_engine(URL.create("sqlite+pysqlite", database=url.database))
        event.listen(self.engine, "connect", on_connect)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-one-trip")

    async def run(self, work: Work[Result]) -> Result:
        loop = asyncio.get_running_loop()
        done = loop.run_in_executor(self._thread, self._transaction, work)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            await asyncio.wait([done])
            raise

    def _transaction(self, work: Work[Result]) -> Result:
        with self.engine.begin() as connection:
            return work(connection)

    async def dispose(self) -> None:
        # On the thread that opened them: sqlite3 connections belong to their thread.
        await asyncio.get_running_loop().run_in_executor(self._thread, self.engine.dispose)

    async def aclose(self) -> None:
        await self.dispose()
        self._thread.shutdown(wait=True)


class EngineWriter:
    """PostgreSQL or a read-only SQLite: the transaction through the async engine."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def run(self, work: Work[Result]) -> Result:
        async with self._engine.begin() as connection:
            return await connection.run_sync(work)

    async def dispose(self) -> None:
        """The engine belongs to the database, which disposes of it."""

    async def aclose(self) -> None:
        """As :meth:`dispose`."""
