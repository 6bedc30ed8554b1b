"""The store's one writer: writing transactions take turns in the process (no "database is
locked" under load), a reply's before waiting background ones, and reads wait for no writer.
(:mod:`tests.memory.test_index_batch` covers the writer's order and cancellation.)"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from memory.priority import Priority
from memory.store import Store, StoreTransaction
from memory.store import database as database_module
from memory.store.schema import SettingRow

WRITERS = 24
SLEEP = text("SELECT test_sleep(:seconds)")


def slow_job(number: int, hold_seconds: float, tx: StoreTransaction) -> None:
    """Reads, writes, then stays open a while holding SQLite's write lock, then writes again.

    The hold comes after the first write is sent (SQLite begins the transaction there), so
    each writer keeps the others out for at least ``hold_seconds``: without the process's
    lock the sixth one waits longer than the busy timeout however fast the machine is. A
    job makes no await: the hold is a query that takes that long, on the connection's own
    thread, while the event loop goes on with the other writers."""
    tx.get_setting("load.counter")
    tx.set_setting(f"load.writer.{number}", "done")
    tx.session.flush()
    tx.session.execute(SLEEP, {"seconds": hold_seconds})
    tx.set_setting("load.counter", str(number))


async def busy_writer(store: Store, number: int, hold_seconds: float) -> None:
    await store.write(partial(slow_job, number, hold_seconds))


def add_sleep(dbapi_connection: Any, connection_record: Any) -> None:
    """``test_sleep(seconds)`` on every connection (test double for a slow statement)."""
    dbapi_connection.create_function("test_sleep", 1, time.sleep)


@pytest.fixture
async def impatient_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    # SQLite gives up after 50 ms instead of 5 s: the same contention, smaller.
    monkeypatch.setattr(database_module, "BUSY_TIMEOUT_MILLISECONDS", 50)
    store = await Store.open(tmp_path / "mnemo.sqlite3")
    assert store.database.write_engine is not None
    for engine in (store.database.write_engine, store.database.engine.sync_engine):
        event.listen(engine, "connect", add_sleep)
    await store.database.engine.dispose()  # the connections open anew, with the function
    return store


async def test_many_concurrent_writers_all_commit(impatient_store: Store) -> None:
    try:
        results = await asyncio.gather(
            *(busy_writer(impatient_store, n, 0.01) for n in range(WRITERS)),
            return_exceptions=True,
        )
        assert [r for r in results if r is not None] == []
        written = await impatient_store.read(
            lambda tx: [tx.get_setting(f"load.writer.{n}") for n in range(WRITERS)]
        )
        assert written == ["done"] * WRITERS
    finally:
        await impatient_store.aclose()


async def test_the_same_writers_fail_without_the_lock(
    impatient_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test above can fail: without the writer's thread, SQLite's busy handler gives up."""

    impatient_store.database._writer = None  # each job on its own, as on PostgreSQL
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
    """The writer's turn held, and in it a write not yet committed (on SQLite its write
    lock): a job cannot stay open across an await, so the test writes as the writer would,
    on a session of its own inside the turn."""

    def slow_setting(tx: StoreTransaction) -> str | None:
        return tx.get_setting("slow")

    async with store.database.writing(Priority.REPLY), store.database.session() as writer:
        writer.add(SettingRow(key="slow", value="1"))
        await writer.flush()
        async with asyncio.timeout(2):
            assert await store.read(slow_setting) is None  # not committed yet
    assert await store.read(slow_setting) == "1"


async def test_a_reply_transaction_goes_before_waiting_background_transactions(
    store: Store,
) -> None:
    order: list[str] = []

    def write(name: str, tx: StoreTransaction) -> None:
        tx.set_setting(f"order.{name}", "1")
        order.append(name)

    await store.write(partial(write, "first"), priority=Priority.BACKGROUND)
    # The turn held while the others come, as a long first job held it (a job cannot wait
    # inside for them).
    async with store.database.writing(Priority.BACKGROUND):
        tasks = [
            asyncio.create_task(
                store.write(partial(write, "background"), priority=Priority.BACKGROUND)
            )
        ]
        await asyncio.sleep(0.01)
        tasks.append(
            asyncio.create_task(store.write(partial(write, "reply"), priority=Priority.REPLY))
        )
        await asyncio.sleep(0.01)
    await asyncio.gather(*tasks)
    if store.database.dialect == "sqlite":
        assert order == ["first", "reply", "background"]
    names = ("first", "reply", "background")
    written = await store.read(lambda tx: [tx.get_setting(f"order.{name}") for name in names])
    assert written == ["1"] * 3
