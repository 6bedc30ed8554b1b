"""One run of an action for many callers who need it done after their own work.

A caller needs a run that STARTED after it asked (a run already under way may have read the
state before the caller's change): the callers who ask while a run is under way all wait for
the one next run, which starts when the current one ends. So however many ask at once, the
action runs at most twice in a row. A run that fails covers nobody: each of its callers gets
its error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Coalesced:
    def __init__(self, action: Callable[[], Awaitable[None]]) -> None:
        self._action = action
        self._running: asyncio.Task[None] | None = None
        # The run the callers that came after the current run started wait for.
        self._next: asyncio.Future[None] | None = None

    async def run(self) -> None:
        """Return once a run that started after this call has succeeded; raise its error."""
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
            # Nobody may be left to read a failed run's error (every caller was cancelled).
            self._next.add_done_callback(_mark_read)
        waited = self._next
        if self._running is None:
            self._start()
        # A caller cancelled while waiting leaves the run to the others.
        await asyncio.shield(waited)

    def _start(self) -> None:
        assert self._next is not None
        finished, self._next = self._next, None
        self._running = asyncio.create_task(self._run(finished), name="coalesced run")

    async def _run(self, finished: asyncio.Future[None]) -> None:
        try:
            await self._action()
        except asyncio.CancelledError:
            # Shutting down: no run after this one either.
            self._running = None
            finished.cancel()
            if self._next is not None:
                self._next.cancel()
                self._next = None
            raise
        except Exception as error:
            finished.set_exception(error)
        else:
            finished.set_result(None)
        self._running = None
        if self._next is not None:
            self._start()

    async def aclose(self) -> None:
        """Wait for the run under way and the one queued after it (they are short)."""
        while self._running is not None:
            await asyncio.wait([self._running])


def _mark_read(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()
