"""Replies first: background memory work gives way while someone waits for an answer.

The core marks each reply it is preparing (:meth:`ReplyPriority.reply`); background work
(the write queue's model calls and commits, consolidation) runs each step inside
:meth:`ReplyPriority.background`. With no reply in progress, background steps run freely.
While replies are in progress, a background step waits for them to finish, so it takes no
CPU, database or model time from them; only after waiting ``max_wait_seconds`` does it go
anyway, and then at most ``busy_steps`` background steps run beside the replies. So the queue
falls behind under a burst and catches up after it, and a steady stream of replies slows it
down but never stops it.

A task inside :meth:`ReplyPriority.reply` is a reply task (:func:`in_reply`): the store lets
its write transactions go before background ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

_IN_REPLY: ContextVar[bool] = ContextVar("in_reply", default=False)


def in_reply() -> bool:
    """Whether the current task is preparing a reply someone waits for."""
    return _IN_REPLY.get()


# How often a step that waited its time looks for a free slot beside the replies.
SLOT_POLL_SECONDS = 0.05


class ReplyPriority:
    def __init__(
        self,
        *,
        max_wait_seconds: float = 5.0,
        busy_steps: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_wait_seconds < 0 or busy_steps < 1:
            raise ValueError("max_wait_seconds must be >= 0 and busy_steps at least 1")
        self.max_wait_seconds = max_wait_seconds
        self.busy_steps = busy_steps
        self._clock = clock
        self._replies = 0
        self._steps = 0
        self._no_replies = asyncio.Event()
        self._no_replies.set()
        # How many background steps had to wait for replies (for the benchmark and tests).
        self.waited_steps = 0

    @property
    def replies_in_progress(self) -> int:
        return self._replies

    @contextmanager
    def reply(self) -> Iterator[None]:
        """Mark a reply in progress (synchronous: entering costs a reply nothing)."""
        self._replies += 1
        self._no_replies.clear()
        token = _IN_REPLY.set(True)
        try:
            yield
        finally:
            _IN_REPLY.reset(token)
            self._replies -= 1
            if self._replies == 0:
                self._no_replies.set()

    @asynccontextmanager
    async def background(self) -> AsyncIterator[None]:
        """One background step: entered when no reply is in progress, or after
        ``max_wait_seconds`` with at most ``busy_steps`` steps beside the replies."""
        await self._wait_for_turn()
        self._steps += 1
        try:
            yield
        finally:
            self._steps -= 1

    async def _wait_for_turn(self) -> None:
        if self._replies == 0:
            return
        self.waited_steps += 1
        deadline = self._clock() + self.max_wait_seconds
        while self._replies > 0:
            remaining = deadline - self._clock()
            if remaining <= 0:
                if self._steps < self.busy_steps:
                    return
                remaining = SLOT_POLL_SECONDS
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._no_replies.wait(), remaining)


def background_turn(priority: ReplyPriority | None) -> contextlib.AbstractAsyncContextManager[None]:
    """One background step of ``priority`` (:meth:`ReplyPriority.background`); without one,
    the step runs at once (a process that answers nobody: ``mnemo worker``, tests)."""
    if priority is None:
        return contextlib.nullcontext()
    return priority.background()
