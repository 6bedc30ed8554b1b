"""A process that applies queued writes (``mnemo worker``), beside the bot, on PostgreSQL.

It claims from the shared queue (:class:`memory.write.worker.QueueWorker`), takes part
in the scheduled jobs (each runs once across all processes), and looks at the queue every
``poll_seconds`` as well as whenever its own work ends: the bot that queued a message is
another process and cannot wake it. It stops on SIGTERM or SIGINT, giving the writes in
progress the write settings' grace; what is cut off stays queued for another worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from bot.app import Application
from bot.health.reporter import reporting_status

log = logging.getLogger(__name__)


async def run_worker(
    application: Application, *, poll_seconds: float, stop: asyncio.Event | None = None
) -> None:
    """Apply queued writes until ``stop`` is set (or a signal arrives)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    try:
        await application.start()
        log.info(
            "worker %s applies queued writes (looking every %g s)",
            application.writer.worker.worker_id,
            poll_seconds,
        )
        async with reporting_status(application, None):
            while not stop.is_set():
                application.writer.wake()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), poll_seconds)
    finally:
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(number)
