"""Writes the status file of a running bot or worker every few seconds (see ``status``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

from bot.app import Application
from bot.health.status import Status, write_status
from memory.errors import MemoryLayerError

log = logging.getLogger(__name__)

INTERVAL_SECONDS = 10.0

# Whether the chat connection is up now; None for a process without one.
Connected = Callable[[], bool]


class StatusReporter:
    def __init__(
        self,
        path: Path,
        application: Application,
        connected: Connected | None,
        *,
        interval_seconds: float = INTERVAL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._path = path
        self._application = application
        self._connected = connected
        self._interval = interval_seconds
        self._clock = clock
        self._applied = application.writer.worker.completed
        self._applied_at: float | None = None

    async def snapshot(self) -> Status:
        now = self._clock()
        worker = self._application.writer.worker
        if worker.completed != self._applied:
            self._applied, self._applied_at = worker.completed, now
        return Status(
            written_at=now,
            interval_seconds=self._interval,
            connected=None if self._connected is None else self._connected(),
            applies_writes=self._application.applies_writes,
            worker_running=worker.running,
            oldest_due_seconds=await self._oldest_due_seconds(now),
            last_applied_seconds=None if self._applied_at is None else now - self._applied_at,
        )

    async def _oldest_due_seconds(self, now: float) -> float | None:
        moment = datetime.fromtimestamp(now, UTC)
        try:
            due = await self._application.store.read(
                lambda transaction: transaction.pending.due(moment, limit=1)
            )
        except MemoryLayerError as error:
            log.warning("the status file cannot say how the queue moves: %s", error)
            return None
        if not due:
            return None
        waiting_since = max(due[0].created_at, due[0].next_attempt_at)
        return max(0.0, (moment - waiting_since).total_seconds())

    async def write(self) -> None:
        status = await self.snapshot()
        try:
            await asyncio.to_thread(write_status, self._path, status)
        except OSError as error:
            log.warning("cannot write the status file %s: %s", self._path, error)

    async def run(self) -> None:
        while True:
            await self.write()
            await asyncio.sleep(self._interval)


@contextlib.asynccontextmanager
async def reporting_status(
    application: Application, connected: Connected | None
) -> AsyncIterator[None]:
    """Keep ``logging.status_file`` current while the body runs; remove it after (a stopped
    process is not healthy). Nothing when no status file is configured."""
    path = application.config.logging.status_file
    if path is None:
        yield
        return
    task = asyncio.create_task(StatusReporter(path, application, connected).run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        path.unlink(missing_ok=True)
