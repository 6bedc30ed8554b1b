"""One writing transaction at a time in this process, a reply's before background ones.

SQLite has a single writer. Left to SQLite, concurrent writers wait in its busy handler,
which sleeps and polls: unfair, and bounded by ``busy_timeout``, so under load a writer
that keeps losing fails with "database is locked" (benchmarks/load.py saw it at 10 people
at once); and a transaction that read before writing fails at once if another one committed
in between. Waiting here instead costs no polling, never times out, and, because the lock is
held from the transaction's first statement, no other writer of this process can commit
between its reads and its writes.

Waiters of a reply task (:func:`memory.priority.in_reply`) are served before the others, in
arrival order within each lane.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from memory.priority import in_reply


class WriteLock:
    def __init__(self) -> None:
        self._held = False
        self._urgent: deque[asyncio.Future[None]] = deque()
        self._others: deque[asyncio.Future[None]] = deque()

    @property
    def held(self) -> bool:
        return self._held

    @asynccontextmanager
    async def hold(self, *, urgent: bool | None = None) -> AsyncIterator[None]:
        """``urgent``: in the replies' lane (default: whether this task is a reply's)."""
        await self._acquire(in_reply() if urgent is None else urgent)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, urgent: bool) -> None:
        if not self._held and not self._urgent and not self._others:
            self._held = True
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        lane = self._urgent if urgent else self._others
        lane.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release()  # handed over just as the waiter was cancelled: pass it on
            elif turn in lane:
                lane.remove(turn)
            raise

    def _release(self) -> None:
        for lane in (self._urgent, self._others):
            while lane:
                turn = lane.popleft()
                if not turn.done():
                    turn.set_result(None)  # the lock passes on, still held
                    return
        self._held = False
