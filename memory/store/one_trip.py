"""Short writing transactions run whole in one call, those waiting at once together: the
reply path's intake and answer.

Through the async engine a transaction is one trip to SQLite's thread per statement, and each
trip waits its turn on the event loop. Under load (fifty people at once) a reply's intake of
five statements held the store's write lock for all those turns while the other replies
queued behind it: the write lock was busy most of the time with replies waiting for each
other (docs/benchmarks.md, "Load"). Here a transaction is a plain function over a
synchronous SQLAlchemy ``Connection``, run whole on a thread of its own: one hop, and the lock
is held for SQLite's own time. The transactions that wait meanwhile go together: one turn of
the write lock, one call, one commit; if that fails, each runs alone, so one failing
transaction fails alone.

PostgreSQL (and a read-only SQLite) run the same functions through the async engine
(``run_sync``), each its own transaction: the same statements, awaited one by one, where the
server does the waiting.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from sqlalchemy import URL, Connection, Engine, create_engine, event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from memory.priority import in_reply

Result = TypeVar("Result")
# A transaction's statements and what it returns; committed if it returns, rolled back if
# it raises.
Work = Callable[[Connection], Result]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one transaction returned, or the error it failed with."""

    value: Any = None
    error: Exception | None = None


class OneTripWriter(Protocol):
    async def run_together(self, works: Sequence[Work[Any]]) -> list[Outcome]:
        """Each work's outcome, in order; a failed one rolled back and the others kept."""

    async def dispose(self) -> None:
        """Close the connections it keeps; the next transaction opens a new one."""

    async def aclose(self) -> None: ...


class ThreadWriter:
    """SQLite: the transactions in one call on a single thread with its own connection.

    The caller holds the store's write lock; if it is cancelled meanwhile it waits for the
    thread to finish (the transactions commit or roll back either way), so the lock is not
    passed on while SQLite still writes.
    """

    def __init__(self, url: URL, on_connect: Callable[[Any, Any], None]) -> None:
        self.engine: Engine = create_engine(URL.create("sqlite+pysqlite", database=url.database))
        event.listen(self.engine, "connect", on_connect)
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-one-trip")

    async def run_together(self, works: Sequence[Work[Any]]) -> list[Outcome]:
        loop = asyncio.get_running_loop()
        done = loop.run_in_executor(self._thread, self._together, list(works))
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            await asyncio.wait([done])
            raise

    def _together(self, works: list[Work[Any]]) -> list[Outcome]:
        if len(works) > 1:
            try:
                with self.engine.begin() as connection:
                    values = [work(connection) for work in works]
                return [Outcome(value) for value in values]
            except Exception:  # rolled back: each runs alone below
                pass
        return [self._alone(work) for work in works]

    def _alone(self, work: Work[Any]) -> Outcome:
        try:
            with self.engine.begin() as connection:
                return Outcome(work(connection))
        except Exception as error:
            return Outcome(error=error)

    async def dispose(self) -> None:
        # On the thread that opened them: sqlite3 connections belong to their thread.
        await asyncio.get_running_loop().run_in_executor(self._thread, self.engine.dispose)

    async def aclose(self) -> None:
        await self.dispose()
        self._thread.shutdown(wait=True)


class EngineWriter:
    """PostgreSQL or a read-only SQLite: each transaction through the async engine."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine

    async def run_together(self, works: Sequence[Work[Any]]) -> list[Outcome]:
        outcomes = []
        for work in works:
            try:
                async with self._engine.begin() as connection:
                    outcomes.append(Outcome(await connection.run_sync(work)))
            except Exception as error:
                outcomes.append(Outcome(error=error))
        return outcomes

    async def dispose(self) -> None:
        """The engine belongs to the database, which disposes of it."""

    async def aclose(self) -> None:
        """As :meth:`dispose`."""


@dataclass
class _WaitingWork:
    work: Work[Any]
    urgent: bool
    done: asyncio.Future[Any] = field(repr=False)


class TogetherWriter:
    """Runs each caller's transaction with the others waiting at the same time: one turn of
    the write lock (``hold``), in the replies' lane if any of them is a reply's."""

    def __init__(
        self,
        writer: OneTripWriter,
        hold: Callable[[bool], AbstractAsyncContextManager[None]],
        translate: Callable[[SQLAlchemyError], Exception],
    ) -> None:
        self._writer = writer
        self._hold = hold
        self._translate = translate
        self._waiting: list[_WaitingWork] = []
        self._runner: asyncio.Task[None] | None = None

    async def run(self, work: Work[Result]) -> Result:
        done: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._waiting.append(_WaitingWork(work, in_reply(), done))
        if self._runner is None or self._runner.done():
            # Its own context: started by one caller, it works for all of them.
            self._runner = asyncio.create_task(self._run(), context=contextvars.Context())
        return await done

    async def _run(self) -> None:
        while self._waiting:
            urgent = any(waiting.urgent for waiting in self._waiting)
            async with self._hold(urgent):
                # Taken once the lock is ours: those that came while it was held go too.
                batch = [waiting for waiting in self._waiting if not waiting.done.done()]
                self._waiting.clear()
                if not batch:
                    continue
                try:
                    outcomes = await self._writer.run_together([item.work for item in batch])
                except asyncio.CancelledError:  # closed in the middle of a call
                    for item in batch:
                        item.done.cancel()
                    raise
                except Exception as error:  # e.g. the thread was shut down: say so to all
                    outcomes = [Outcome(error=error)] * len(batch)
            for item, outcome in zip(batch, outcomes, strict=True):
                self._settle(item, outcome)

    def _settle(self, item: _WaitingWork, outcome: Outcome) -> None:
        if item.done.done():  # its caller was cancelled meanwhile
            return
        if outcome.error is None:
            item.done.set_result(outcome.value)
        elif isinstance(outcome.error, SQLAlchemyError):
            item.done.set_exception(self._translate(outcome.error))
        else:
            item.done.set_exception(outcome.error)

    async def aclose(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        for item in self._waiting:
            item.done.cancel()
        self._waiting.clear()
