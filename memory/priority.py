"""Replies first: the one module that decides what goes before what.

Work is of two priorities, passed explicitly by whoever starts it: ``REPLY`` (someone waits
for the answer: the intake, the answer, a command) and ``BACKGROUND`` (the write queue,
consolidation, maintenance). Two things use them:

- the store's writer (:mod:`memory.store.write_thread`) runs waiting write jobs replies'
  first, each priority in arrival order;
- :class:`Replies`, the replies in progress: background model calls
  (:mod:`memory.write.background_model`) are not sent while a reply is prepared, and one
  already at the model server gives way when a reply starts.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Iterator
from contextlib import contextmanager


class Priority(enum.Enum):
    REPLY = "reply"
    BACKGROUND = "background"


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
