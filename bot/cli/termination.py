"""SIGTERM ends a command as Ctrl-C does: its work is cancelled, its ``finally`` blocks run.

``docker stop`` (and systemd) send SIGTERM. Python's default for it ends the process at once,
and in a container, where the process is PID 1, the default is to ignore it: the bot would be
killed when the grace period runs out. Cancelled instead, the bot closes its parts in order;
a write in progress gets the writer's grace and what is cut off stays queued.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


async def until_terminated(work: Coroutine[Any, Any, int]) -> int:
    """Run ``work``; on SIGTERM cancel it and return 0 (a stop that was asked for)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    terminated = False

    def terminate() -> None:
        # Once: a second cancel would cut the closing short.
        nonlocal terminated
        if not terminated:
            log.info("SIGTERM: stopping")
            terminated = True
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        return await task
    except asyncio.CancelledError:
        if not terminated:
            raise
        log.info("stopped")
        return 0
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
