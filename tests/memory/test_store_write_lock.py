"""Writing transactions take turns in the process (no "database is locked" under load),
replies' before background ones, and reads wait for no writer."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from memory.priority import ReplyPriority
from memory.store import Store
from memory.store import database as database_module
from memory.store.write_lock import WriteLock

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
    """The test above can fail: without the lock, SQLite's busy handler gives up."""

    class NoLock(WriteLock):
        async def _acquire(self, urgent: bool) -> None:
            return None

        def _release(self) -> None:
            return None

    impatient_store.database.write_lock = NoLock()
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


async def test_a_reply_writer_goes_before_waiting_background_writers() -> None:
    lock = WriteLock()
    priority = ReplyPriority()
    order: list[str] = []

    async def write(name: str) -> None:
        async with lock.hold():
            order.append(name)

    async def reply_write() -> None:
        with priority.reply():
            await write("reply")

    async with lock.hold():
        tasks = [asyncio.create_task(write("background 1"))]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(write("background 2")))
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(reply_write()))
        await asyncio.sleep(0)
    await asyncio.gather(*tasks)
    assert order == ["reply", "background 1", "background 2"]


async def test_a_cancelled_waiter_does_not_keep_the_lock() -> None:
    lock = WriteLock()
    entered: list[str] = []

    async def write(name: str) -> None:
        async with lock.hold():
            entered.append(name)

    async with lock.hold():
        leaving = asyncio.create_task(write("leaving"))
        staying = asyncio.create_task(write("staying"))
        await asyncio.sleep(0)
        leaving.cancel()
        await asyncio.sleep(0)
    async with asyncio.timeout(1):
        await staying
    assert entered == ["staying"]
    assert not lock.held
