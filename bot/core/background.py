"""Background tasks the core starts after replying, kept so shutdown can wait for them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class BackgroundTasks:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any], *, what: str) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(done, what))

    def _finished(self, task: asyncio.Task[Any], what: str) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background %s failed", what, exc_info=task.exception())

    async def wait(self) -> None:
        """Wait until every task started so far (and any they start) has finished."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
