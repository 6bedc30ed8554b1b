"""Replies first: the one module that decides what goes before what.

Work is of two priorities, passed explicitly by whoever starts it: ``REPLY`` (someone waits
for the answer: the intake, the answer, a command) and ``BACKGROUND`` (the write queue,
consolidation, maintenance). Two things use them:

- :class:`Turns`, one at a time in priority order: the store's writer
  (:meth:`memory.store.database.Database.writing`) serves waiting write transactions with it.
- :class:`Replies`, the replies in progress: background model calls
  (:mod:`memory.write.background_model`) are not sent while a reply is prepared, and one
  already at the model server gives way when a reply starts.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager


class Priority(enum.Enum):
    REPLY = "reply"
    BACKGROUND = "background"


class Turns:
    """One holder at a time; waiters of ``REPLY`` before those of ``BACKGROUND``, each in
    arrival order. Unlike SQLite's busy handler it never polls and never times out."""

    def __init__(self) -> None:
        self._held = False
        self._lanes: dict[Priority, deque[asyncio.Future[None]]] = {
            Priority.REPLY: deque(),
            Priority.BACKGROUND: deque(),
        }

    @property
    def held(self) -> bool:
        return self._held

    @property
    def waited_for(self) -> bool:
        """Whether someone waits for the turn (a waiter cancelled meanwhile does not)."""
        return any(not turn.done() for lane in self._lanes.values() for turn in lane)

    @property
    def next_priority(self) -> Priority | None:
        """The priority of the waiter the turn passes to next, if any."""
        for priority, lane in self._lanes.items():
            if any(not turn.done() for turn in lane):
                return priority
        return None

    @asynccontextmanager
    async def hold(self, priority: Priority) -> AsyncIterator[None]:
        await self.acquire(priority)
        try:
            yield
        finally:
            self.release()

    async def acquire(self, priority: Priority) -> None:
        if self.take():
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        lane = self._lanes[priority]
        lane.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # handed over just as the waiter was cancelled: pass it on
            elif turn in lane:
                lane.remove(turn)
            raise

    def take(self) -> bool:
        """Hold the turn if nobody holds or waits for it."""
        if self._held or self.waited_for:
            return False
        self._held = True
        return True

    def pass_on(self) -> bool:
        """Hand the turn, still held, to the next waiter; False (and still ours) if none."""
        for lane in self._lanes.values():
            while lane:
                turn = lane.popleft()
                if not turn.done():
                    turn.set_result(None)
                    return True
        return False

    def release(self) -> None:
        if not self.pass_on():
            self._held = False


class Replies:
    """The replies in progress. The core marks each one (:meth:`reply`); background model
    calls wait for none (:meth:`none_in_progress`) and give way to the next one
    (:meth:`next_reply`)."""

    def __init__(self) -> None:
        self._count = 0
        self._none = asyncio.Event()
        self._none.set()
        self._started: asyncio.Event = asyncio.Event()

    @property
    def in_progress(self) -> int:
        return self._count

    @contextmanager
    def reply(self) -> Iterator[None]:
        """Mark a reply in progress (synchronous: entering costs a reply nothing)."""
        self._count += 1
        self._none.clear()
        self._started.set()
        self._started = asyncio.Event()
        try:
            yield
        finally:
            self._count -= 1
            if self._count == 0:
                self._none.set()

    async def none_in_progress(self) -> None:
        """Return once no reply is in progress."""
        await self._none.wait()

    async def next_reply(self) -> None:
        """Return when a reply starts after this call."""
        await self._started.wait()
