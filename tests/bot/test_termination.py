"""SIGTERM (``docker stop``) ends a command through its ``finally`` blocks, exit code 0."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from bot.cli.termination import until_terminated


async def test_sigterm_cancels_the_work_and_lets_it_close() -> None:
    started = asyncio.Event()
    closed: list[str] = []

    async def bot() -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            # Closing awaits too (the writer's grace): a second signal must not cut it.
            os.kill(os.getpid(), signal.SIGTERM)
            await asyncio.sleep(0.05)
            closed.append("closed")
        return 1

    running = asyncio.create_task(until_terminated(bot()))
    await started.wait()
    os.kill(os.getpid(), signal.SIGTERM)
    assert await asyncio.wait_for(running, 10) == 0
    assert closed == ["closed"]
    # The handler is gone with the command: this process's SIGTERM is as before.
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


async def test_the_work_s_own_result_and_cancellation_pass_through() -> None:
    async def quick() -> int:
        return 3

    assert await until_terminated(quick()) == 3

    async def forever() -> int:
        await asyncio.Event().wait()
        return 0

    running = asyncio.create_task(until_terminated(forever()))
    await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
