"""The store's one writer: writing transactions take turns in the process (no "database is
locked" under load), a reply's before waiting background ones, and reads wait for no writer.
(:mod:`tests.memory.test_priority` covers the turns' order and cancellation.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memory.priority import Priority
from memory.store import Store
from memory.store import database as database_module

WRITERS = 24


async def busy_writer(store: Store, number: int, hold_seconds: float) -> None:
    """A write transaction that reads, writes, then stays open a while holding SQLite's
    write lock (the event loop is busy elsewhere, as under load), then writes again.

    The hold comes after the first write is sent (SQLite begins the transaction there), so
    each writer keeps the others out for at least ``hold_seconds``: without the process's
    lock the sixth one waits longer than the busy timeout however fast the machine is."""
    async with store.transaction() as tx:
        await tx.get_setting("load.counter")
        await tx.set_setting(f"load.writer.{number}", "done")
        await tx.session.flush()
        await asyncio.sleep(hold_seconds)
        await tx.set_setting("load.counter", str(number))


@pytest.fixture
async def impatient_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    # SQLite gives up after 50 ms instead of 5 s: the same contention, smaller.
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT_MILLISECONDS", 50)
    return await Store.open(tmp_path / "mnemo.sqlite3")


async def test_many_concurrent_writers_all_commit(impatient_store: Store) -> None:
    try:
        results = await asyncio.gather(
            *(busy_writer(impatient_store, n, 0.01) for n in range(WRITERS)),
            return_exceptions=True,
        )
        assert [r for r in results if r is not None] == []
        async with impatient_store.read() as tx:
            written = await tx.setting_keys("load.writer.")
        assert len(written) == WRITERS
    finally:
        await impatient_store.aclose()


async def test_the_same_writers_fail_without_the_lock(
    impatient_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: without the turns, SQLite's busy handler gives up."""

    impatient_store.database._turns = None  # each transaction on its own, as on PostgreSQL
    try:
        results = await asyncio.gather(
            *(busy_writer(impatient_store, n, 0.01) for n in range(WRITERS)),
            return_exceptions=True,
        )
        failures = [str(r) for r in results if r is not None]
        assert failures
        assert all("locked" in failure for failure in failures)
    finally:
        await impatient_store.aclose()


async def test_reads_wait_for_no_writer(store: Store) -> None:
    holding = asyncio.Event()
    release = asyncio.Event()

    async def long_writer() -> None:
        async with store.transaction() as tx:
            await tx.set_setting("slow", "1")
            holding.set()
            await release.wait()

    writer = asyncio.create_task(long_writer())
    await holding.wait()
    async with asyncio.timeout(2), store.read() as tx:
        assert await tx.get_setting("slow") is None  # not committed yet
    release.set()
    await writer


async def test_a_reply_transaction_goes_before_waiting_background_transactions(
    store: Store,
) -> None:
    order: list[str] = []
    release = asyncio.Event()

    async def write(name: str, priority: Priority) -> None:
        async with store.transaction(priority=priority) as tx:
            await tx.set_setting(f"order.{name}", "1")
            order.append(name)
            if name == "first":
                await release.wait()

    first = asyncio.create_task(write("first", Priority.BACKGROUND))
    await asyncio.sleep(0.05)
    tasks = [asyncio.create_task(write("background", Priority.BACKGROUND))]
    await asyncio.sleep(0.01)
    tasks.append(asyncio.create_task(write("reply", Priority.REPLY)))
    await asyncio.sleep(0.01)
    release.set()
    await asyncio.gather(first, *tasks)
    if store.database.dialect == "sqlite":
        assert order == ["first", "reply", "background"]
    async with store.read() as tx:
        assert len(await tx.setting_keys("order.")) == 3
