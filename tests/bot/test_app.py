"""The composition root starts and stops the maintenance jobs with the bot."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from bot.scheduler import (
    CONSOLIDATION,
    PENDING_RETRY,
    PURGE,
    RECONCILE,
    Job,
    MaintenanceScheduler,
)
from memory.embedding import Embedder
from memory.store import Store
from tests.bot.core.harness import open_harness


async def test_start_schedules_every_job_and_close_stops_them(
    tmp_path: Path, embedder: Embedder
) -> None:
    harness = await open_harness(tmp_path, embedder)
    scheduler = harness.app.scheduler
    assert not scheduler.running
    await harness.app.start()
    assert scheduler.running
    assert set(scheduler.next_run_times()) == {CONSOLIDATION, RECONCILE, PENDING_RETRY, PURGE}
    await harness.app.aclose()
    assert not scheduler.running


async def test_shutdown_waits_for_a_running_job(store: Store) -> None:
    release = asyncio.Event()
    finished: list[str] = []

    async def slow_job() -> str:
        await release.wait()
        finished.append("slow")
        return "done"

    scheduler = MaintenanceScheduler(store, [Job("slow", timedelta(hours=1), slow_job)])
    await scheduler.start()
    running = asyncio.create_task(scheduler.run_now("slow"))
    await asyncio.sleep(0.05)
    stopping = asyncio.create_task(scheduler.shutdown())
    await asyncio.sleep(0.05)
    assert not stopping.done(), "shutdown returned while the job still used the store"
    release.set()
    await stopping
    assert finished == ["slow"]
    assert await running == "done"
