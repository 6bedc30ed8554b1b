"""Replies first: the one module that decides what goes before what.

Work is of two priorities, passed explicitly by whoever starts it: ``REPLY`` (someone waits
for the answer: the intake, the answer, a command) and ``BACKGROUND`` (the write queue,
consolidation, maintenance). Three things use them:

- the store's writer (:mod:`memory.store.write_thread`) runs waiting write jobs replies'
  first, each priority in arrival order;
- the write queue (:mod:`memory.write.worker`) takes its next message only once no reply is
  in progress (:class:`Replies`, which the core marks), so its work takes no CPU or writer
  time from a reply;
- the background's model calls (:class:`BackgroundModel`) are not sent while a reply is
  prepared, and one already at the model server is cancelled when a reply starts and sent
  again after it (a local server answers few requests at once and stops when the request
  is closed; the call is idempotent).

After ``MAX_WAIT_SECONDS`` of replies without a gap background work goes on anyway:
learning slows, never stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from memory.llm import CallKind, ChatMessage, LanguageModel

MAX_WAIT_SECONDS = 60.0


class Priority(enum.Enum):
    REPLY = "reply"
    BACKGROUND = "background"


class Replies:
    """The replies in progress. The core marks each one (:meth:`reply`); background work
    waits for none (:meth:`quiet`), and a model call gives way to the next one
    (:meth:`next_reply`)."""

    def __init__(self) -> None:
        self._count = 0
        self._none = asyncio.Event()
        self._none.set()
        self._started: asyncio.Event = asyncio.Event()

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

    async def next_reply(self) -> None:
        """Return when a reply starts after this call."""
        await self._started.wait()

    async def quiet(self, max_wait_seconds: float = MAX_WAIT_SECONDS) -> bool:
        """Return once no reply is in progress (True), or after ``max_wait_seconds`` of
        replies without a gap (False)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max_wait_seconds
        # Looked at again after each wake-up: a reply may have started since the last ended.
        while self._count:
            try:
                await asyncio.wait_for(self._none.wait(), deadline - loop.time())
            except TimeoutError:
                return False
        return True


class BackgroundModel:
    """A :class:`LanguageModel` whose calls give way to replies; the model is not owned."""

    def __init__(
        self,
        model: LanguageModel,
        replies: Replies,
        *,
        max_calls: int = 1,
        max_wait_seconds: float = MAX_WAIT_SECONDS,
    ) -> None:
        if max_calls < 1 or max_wait_seconds < 0:
            raise ValueError("max_calls must be at least 1 and max_wait_seconds at least 0")
        self._model = model
        self._replies = replies
        self._calls = asyncio.Semaphore(max_calls)
        self._max_wait_seconds = max_wait_seconds

    @property
    def model_name(self) -> str:
        return self._model.model_name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        async with self._calls:
            while True:
                quiet = await self._replies.quiet(self._max_wait_seconds)
                call = asyncio.ensure_future(
                    self._model.complete(
                        messages, kind=kind, json_schema=json_schema, temperature=temperature
                    )
                )
                if not quiet:
                    return await call
                if await self._finished_before_a_reply(call):
                    return call.result()

    async def _finished_before_a_reply(self, call: asyncio.Future[str]) -> bool:
        """Wait for ``call``; if a reply starts first, cancel it (False)."""
        reply = asyncio.ensure_future(self._replies.next_reply())
        waited: set[asyncio.Future[Any]] = {call, reply}
        try:
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reply.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
        return not call.cancelled()

    async def aclose(self) -> None:
        """The model belongs to whoever built it."""
