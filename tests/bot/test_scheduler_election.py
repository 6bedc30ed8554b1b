"""Scheduled jobs run once across the processes sharing one PostgreSQL database (issue 15,
item 3): an advisory lock elects the runner. Two stores on one database stand for two
processes (each has its own connections, so its own advisory-lock sessions)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.scheduler import Job, MaintenanceScheduler
from memory.store import Store
from tests.conftest import new_database


@pytest.fixture
async def two_processes(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Store, Store]]:
    location: Path | URL = await new_database(backend, tmp_path, request)
    first = await Store.open(location)
    second = await Store.open(location)
    yield first, second
    await first.aclose()
    await second.aclose()


def slow_job(runs: list[str], name: str, started: asyncio.Event, release: asyncio.Event) -> Job:
    async def run() -> str:
        runs.append(name)
        started.set()
        await release.wait()
        return "done"

    return Job("consolidation", timedelta(hours=1), run)


async def test_a_due_job_runs_in_one_process_only(
    backend: str, two_processes: tuple[Store, Store]
) -> None:
    if backend == "sqlite":
        pytest.skip("one process owns a SQLite database: nothing to elect")
    runs: list[str] = []
    started, release = asyncio.Event(), asyncio.Event()
    first = MaintenanceScheduler(two_processes[0], [slow_job(runs, "first", started, release)])
    second = MaintenanceScheduler(two_processes[1], [slow_job(runs, "second", started, release)])

    running = asyncio.create_task(first.run_scheduled("consolidation"))
    await started.wait()
    assert await second.run_scheduled("consolidation") is None  # the other one holds it
    release.set()
    assert await running == "done"
    # Just run elsewhere: the next process whose schedule comes due skips it too.
    assert await second.run_scheduled("consolidation") is None
    assert runs == ["first"]


async def test_the_queue_retry_wakes_every_process(
    two_processes: tuple[Store, Store],
) -> None:
    runs: list[str] = []

    def job(name: str, *, every_process: bool) -> Job:
        async def run() -> str:
            runs.append(name)
            return "ok"

        return Job(name, timedelta(hours=1), run, every_process=every_process)

    for store in two_processes:
        scheduler = MaintenanceScheduler(store, [job("pending_retry", every_process=True)])
        assert await scheduler.run_scheduled("pending_retry") == "ok"
    assert runs == ["pending_retry", "pending_retry"]


async def test_on_sqlite_every_due_run_runs(tmp_path: Path) -> None:
    """One process: no election, no skipping a run because one was made just before."""
    store = await Store.open(tmp_path / "mnemo.sqlite3")
    runs: list[str] = []

    async def run() -> str:
        runs.append("ran")
        return "ok"

    scheduler = MaintenanceScheduler(store, [Job("consolidation", timedelta(hours=1), run)])
    try:
        assert await scheduler.run_scheduled("consolidation") == "ok"
        assert await scheduler.run_scheduled("consolidation") == "ok"
    finally:
        await store.aclose()
    assert runs == ["ran", "ran"]
