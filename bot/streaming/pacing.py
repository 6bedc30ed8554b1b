"""An answer shown as it grows: the first text at once, then at most one update an interval.

Texts that arrive while an update waits or runs are joined: only the latest is shown. An
update starts an interval after the one before it ended, so updates reach the platform at
least an interval apart however long each takes, and a platform that slows down (a 429
whose retry-after its client sleeps) slows the updates instead of piling them up.
``finish`` shows the whole answer last, in the same order and at the same pace.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.streaming.base import Display

log = logging.getLogger(__name__)


class PacedAnswer:
    """An :class:`~bot.streaming.base.AnswerStream` that updates ``display`` paced."""

    def __init__(
        self, display: Display, interval: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._display = display
        self._interval = interval
        self._clock = clock
        self._latest: str | None = None
        self._shown: str | None = None
        self._next_at = 0.0
        self._failed = False
        self._task: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        """Whether any text was given to show (the answer is then this stream's to finish)."""
        return self._latest is not None

    def grow(self, text: str) -> None:
        self._latest = text
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._update())

    async def finish(self, text: str) -> bool:
        """Show ``text``, the whole answer, after the updates before it; whether it is shown.
        Not when nothing was streamed, nor when the platform refused an update: the caller
        then sends the answer the way it sends one that was not streamed."""
        if not self.started:
            return False
        self._latest = text
        if self._task is not None:
            await self._task
        if self._shown != text:
            await self._update()
        return self._shown == text

    async def _update(self) -> None:
        while not self._failed and self._latest is not None and self._latest != self._shown:
            wait = self._next_at - self._clock()
            if wait > 0:
                await asyncio.sleep(wait)
            text = self._latest
            try:
                await self._display.show(text)
            except Exception:
                # The answer still comes whole at the end, sent the way it is without streaming.
                log.warning("showing a streamed answer failed; it comes whole", exc_info=True)
                self._failed = True
                return
            self._shown = text
            self._next_at = self._clock() + self._interval
