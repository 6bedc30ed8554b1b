"""SQLite gives the space of deleted rows back to the disk: incremental vacuum and the switch."""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

import pytest

from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.space import (
    database_space,
    give_back_free_pages,
    switch_to_incremental_vacuum,
    vacuum,
)

ALICE = Scope("console:alice", "console:room1")


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """SQLite's pages and files: SQLite only (PostgreSQL's autovacuum keeps its tables)."""
    return sqlite_store


BOB = Scope("console:bob", "console:room1")
LONG = " and also a rather long sentence to fill the pages" * 4


def _add_facts(scope: Scope, count: int, transaction: StoreTransaction) -> None:
    for n in range(count):
        transaction.facts.add(scope, NewFact(f"fact {n}{LONG}"))


async def _fill(store: Store, scope: Scope, count: int) -> None:
    await store.write(partial(_add_facts, scope, count))


async def _forget_everything_of(store: Store, scope: Scope) -> None:
    await store.write(lambda transaction: transaction.facts.erase_all(scope))
    await store.scrub()


async def _count(store: Store, scope: Scope) -> int:
    return await store.read(lambda transaction: transaction.facts.count(scope))


async def test_a_database_made_before_switches_to_incremental_vacuum_keeping_its_rows(
    store: Store,
) -> None:
    await _fill(store, ALICE, 50)
    before = await database_space(store.database)
    assert before is not None and not before.incremental_vacuum

    assert await switch_to_incremental_vacuum(store.database) is True

    after = await database_space(store.database)
    assert after is not None and after.incremental_vacuum
    assert await _count(store, ALICE) == 50
    assert await switch_to_incremental_vacuum(store.database) is None


async def test_a_large_database_waits_for_mnemo_compact(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _fill(store, ALICE, 50)
    monkeypatch.setattr("memory.store.space.SWITCH_AT_START_UP_MAX_BYTES", 4096)
    assert await switch_to_incremental_vacuum(store.database) is False
    space = await database_space(store.database)
    assert space is not None and not space.incremental_vacuum


async def test_free_pages_go_back_to_the_disk(store: Store, tmp_path: Path) -> None:
    await switch_to_incremental_vacuum(store.database)
    await _fill(store, ALICE, 2000)
    await _fill(store, BOB, 100)
    await store.scrub()
    full_size = (tmp_path / "mnemo.sqlite3").stat().st_size

    await _forget_everything_of(store, ALICE)
    freed = await database_space(store.database)
    assert freed is not None and freed.free_bytes > full_size // 2
    assert (tmp_path / "mnemo.sqlite3").stat().st_size == full_size

    given_back = await give_back_free_pages(store.database)

    assert given_back == freed.free_bytes
    after = await database_space(store.database)
    assert after is not None and after.free_bytes == 0
    assert (tmp_path / "mnemo.sqlite3").stat().st_size <= full_size - given_back
    assert (tmp_path / "mnemo.sqlite3-wal").stat().st_size == 0
    assert await _count(store, BOB) == 100


async def test_without_incremental_vacuum_nothing_is_given_back_until_a_vacuum(
    store: Store, tmp_path: Path
) -> None:
    await _fill(store, ALICE, 1000)
    await _forget_everything_of(store, ALICE)
    size = (tmp_path / "mnemo.sqlite3").stat().st_size
    assert await give_back_free_pages(store.database) == 0

    await vacuum(store.database)

    assert (tmp_path / "mnemo.sqlite3").stat().st_size < size // 2
    space = await database_space(store.database)
    assert space is not None and space.incremental_vacuum and space.free_bytes == 0


async def test_replies_read_while_free_pages_are_given_back(store: Store) -> None:
    await switch_to_incremental_vacuum(store.database)
    await _fill(store, ALICE, 3000)
    await _fill(store, BOB, 10)
    await _forget_everything_of(store, ALICE)
    reads: list[int] = []

    async def read_while_giving_back(giving_back: asyncio.Task[int]) -> None:
        while not giving_back.done():
            reads.append(await _count(store, BOB))

    giving_back = asyncio.create_task(give_back_free_pages(store.database))
    await read_while_giving_back(giving_back)
    assert await giving_back > 0
    assert reads and set(reads) == {10}
