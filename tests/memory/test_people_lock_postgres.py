"""One person's memory is changed by one transaction at a time across processes sharing a
PostgreSQL database (memory/store/people_lock.py). Two stores on one database stand for two
processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from memory.records import PendingWrite
from memory.scope import Scope
from memory.store import Store
from memory.store.people_lock import lock_people
from memory.write.worker import QueueWorker
from tests.servers.postgres import PostgresServer

ALICE = Scope("console:alice", "console:room")
BOB = Scope("console:bob", "console:room")
NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


@pytest.fixture
async def two_processes(postgres: PostgresServer) -> AsyncIterator[tuple[Store, Store]]:
    url = await postgres.fresh_database()
    first, second = await Store.open(url), await Store.open(url)
    yield first, second
    await first.aclose()
    await second.aclose()


async def test_a_person_held_by_one_process_waits_in_the_other(
    two_processes: tuple[Store, Store],
) -> None:
    first, second = two_processes
    held, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def hold_alice() -> None:
        async with first.transaction() as transaction:
            await transaction.lock_people([ALICE.owner])
            held.set()
            await release.wait()
            order.append("first done")

    async def alice_elsewhere() -> None:
        async with second.transaction() as transaction:
            await transaction.lock_people([ALICE.owner])
            order.append("second has alice")

    holding = asyncio.create_task(hold_alice())
    await held.wait()
    waiting = asyncio.create_task(alice_elsewhere())
    async with second.database.session() as session:  # another person is not held up
        async with asyncio.timeout(5):
            await lock_people(session, [BOB.owner])
    await asyncio.sleep(0.3)
    assert order == []
    release.set()
    await asyncio.gather(holding, waiting)
    assert order == ["first done", "second has alice"]


async def not_called(pending: PendingWrite, worker: str) -> bool:
    raise AssertionError("the test claims rows; it processes none")


async def test_a_claim_skips_a_person_another_process_is_changing(
    two_processes: tuple[Store, Store],
) -> None:
    first, second = two_processes
    async with first.transaction() as transaction:
        for scope in (ALICE, BOB):
            await transaction.pending.enqueue(scope, "hello", message_time=NOW, now=NOW)
    queue = QueueWorker(
        second,
        not_called,
        lease=timedelta(minutes=15),
        clock=lambda: NOW,
        concurrency=1,
        worker_id="worker-b",
    )
    async with first.transaction() as transaction:
        await transaction.lock_people([ALICE.owner])  # e.g. a forget in progress
        claimed = await queue.claim()
        assert claimed is not None and claimed.owner == BOB.owner
        assert await queue.claim() is None  # Alice held, Bob busy
    claimed = await queue.claim()
    assert claimed is not None and claimed.owner == ALICE.owner
