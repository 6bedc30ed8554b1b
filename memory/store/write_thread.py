"""SQLite's one writer: a thread that owns the write connection and runs write jobs whole.

A write job is a sync function of a session: the thread runs it in one go, so a job costs
the event loop one hand-over there and one back, however many statements it makes (through
an async driver each statement is a trip through the loop, which a burst of replies keeps
busy). The thread takes the jobs waiting at once, replies' first, at most
``COMMIT_MEMBERS``, and commits them together: each runs in a savepoint of its own, so one
that fails is rolled back alone; if SQLite ends the whole transaction (a full disk does),
every job of the commit fails with that error.

Right after a commit, before the next, the thread has the event loop write the index rows
the jobs left and, after a forget, scrub the files (:class:`Commit`): so the index follows
the commit order by construction. Whoever else writes (compaction, the storage job,
closing) holds the writer (:meth:`WriteThread.hold`): the thread waits meanwhile.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from memory.errors import StoreError
from memory.index.after_commit import IndexBatch
from memory.priority import Priority

T = TypeVar("T")
# Jobs sharing one commit, at most: a reply in the first waits for the others.
COMMIT_MEMBERS = 32


@dataclass(eq=False)
class Commit:
    """What the jobs of one commit leave to do after it: their index rows, and after a
    forget the scrub of the files."""

    rows: IndexBatch = field(default_factory=IndexBatch)
    scrub: Callable[[], Awaitable[None]] | None = None

    async def after(self) -> None:
        await self.rows.write()
        if self.scrub is not None:
            await self.scrub()


Job = Callable[[Session, Commit], T]


@dataclass(eq=False)
class _Waiting:
    """A job, or a hold (``job`` is None), waiting for the thread."""

    job: Job[Any] | None
    priority: Priority
    future: asyncio.Future[Any]
    loop: asyncio.AbstractEventLoop
    released: threading.Event = field(default_factory=threading.Event)
    # Set by a caller cancelled while it waited: the thread skips it.
    abandoned: bool = False


class _WholeCommitLost(Exception):
    """SQLite rolled back the whole transaction: every job of the commit fails."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class WriteThread:
    """The writer of one SQLite file. Started at the first job; :meth:`aclose` ends it
    once every job handed to it is done."""

    def __init__(
        self, engine: Engine, *, translate: Callable[[SQLAlchemyError], StoreError]
    ) -> None:
        # Its transactions begin with BEGIN IMMEDIATE (memory/store/database.py).
        self._engine = engine
        self._translate = translate
        self._lanes: dict[Priority, deque[_Waiting]] = {
            Priority.REPLY: deque(),
            Priority.BACKGROUND: deque(),
        }
        self._ready = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None

    async def run(self, job: Job[T], priority: Priority) -> T:
        """Run ``job`` in a commit of the thread; its value once that commit is made and
        its index rows written. A caller cancelled before the job began leaves it undone;
        after, the job is committed all the same."""
        waiting = self._hand_over(job, priority)
        try:
            value: T = await asyncio.shield(waiting.future)
        except asyncio.CancelledError:
            waiting.abandoned = True
            raise
        return value

    @asynccontextmanager
    async def hold(self, priority: Priority) -> AsyncIterator[None]:
        """The writer held for the inside, between two commits: nothing commits meanwhile."""
        waiting = self._hand_over(None, priority)
        try:
            await asyncio.shield(waiting.future)
            yield
        finally:
            waiting.abandoned = True
            waiting.released.set()

    async def aclose(self) -> None:
        with self._ready:
            self._closing = True
            self._ready.notify()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)

    def _hand_over(self, job: Job[Any] | None, priority: Priority) -> _Waiting:
        loop = asyncio.get_running_loop()
        waiting = _Waiting(job, priority, loop.create_future(), loop)
        with self._ready:
            if self._closing:
                raise StoreError("the store is closed: nothing more can be written")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._serve, name="mnemo-sqlite-writer", daemon=True
                )
                self._thread.start()
            self._lanes[priority].append(waiting)
            self._ready.notify()
        return waiting

    # -- the thread ------------------------------------------------------------------------

    def _serve(self) -> None:
        try:
            while (first := self._next(wait=True)) is not None:
                if first.job is None:
                    self._grant_hold(first)
                else:
                    self._commit(first)
        finally:
            self._engine.dispose()

    def _next(self, *, wait: bool, replies_only: bool = False) -> _Waiting | None:
        """The next job or hold waiting, replies' first. ``wait``: until one comes (None
        once closed and nothing waits); else a job to join the open commit, or None."""
        with self._ready:
            while True:
                for priority, lane in self._lanes.items():
                    while lane and lane[0].abandoned:
                        lane.popleft()
                    if not lane:
                        continue
                    background = priority is Priority.BACKGROUND
                    if not wait and (lane[0].job is None or (replies_only and background)):
                        return None
                    return lane.popleft()
                if not wait or self._closing:
                    return None
                self._ready.wait()

    def _grant_hold(self, hold: _Waiting) -> None:
        hold.loop.call_soon_threadsafe(_settle, hold.future, None, None)
        hold.released.wait()

    def _commit(self, first: _Waiting) -> None:
        """``first`` and the jobs that join it, in one commit: until nothing waits, after
        ``COMMIT_MEMBERS``, after a forget (an id it erased may be given again), and, once
        a reply is in it, without background jobs (the reply's caller waits for none)."""
        commit = Commit()
        members: list[_Waiting] = []
        outcomes: list[tuple[Any, BaseException | None]] = []
        try:
            with Session(self._engine, expire_on_commit=False) as session, session.begin():
                item: _Waiting | None = first
                while item is not None:
                    members.append(item)
                    outcomes.append(self._run_one(session, commit, item))
                    if commit.scrub is not None or len(members) == COMMIT_MEMBERS:
                        break
                    replies = any(member.priority is Priority.REPLY for member in members)
                    item = self._next(wait=False, replies_only=replies)
            if commit.rows or commit.scrub is not None:
                asyncio.run_coroutine_threadsafe(commit.after(), first.loop).result()
        except Exception as error:
            # Every job of the commit fails alike: with what ended it, or what failed after it.
            cause = error.error if isinstance(error, _WholeCommitLost) else error
            members = members or [first]
            outcomes = [(None, self._as_store_error(cause))] * len(members)
        for member, (value, failure) in zip(members, outcomes, strict=True):
            member.loop.call_soon_threadsafe(_settle, member.future, value, failure)

    def _run_one(
        self, session: Session, commit: Commit, item: _Waiting
    ) -> tuple[Any, BaseException | None]:
        assert item.job is not None
        session.expunge_all()  # each job reads its rows anew
        savepoint = session.begin_nested()
        try:
            value = item.job(session, commit)
            savepoint.commit()
        except Exception as error:
            try:
                savepoint.rollback()
            except SQLAlchemyError as rollback_error:
                # SQLite ended the whole transaction (a full disk may): the savepoint is gone.
                raise _WholeCommitLost(error) from rollback_error
            return None, self._as_store_error(error)
        return value, None

    def _as_store_error(self, error: BaseException) -> BaseException:
        return self._translate(error) if isinstance(error, SQLAlchemyError) else error


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
