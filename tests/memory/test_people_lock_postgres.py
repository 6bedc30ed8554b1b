"""One person's memory is changed by one transaction at a time across processes sharing a
PostgreSQL database (memory/store/people_lock.py). Two stores on one database stand for two
processes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest

from memory.records import PendingWrite
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.write.worker import QueueWorker
from tests.memory.lock_waits import hold_until
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


def hold_alice(
    held: threading.Event, release: threading.Event, transaction: StoreTransaction
) -> None:
    """Alice's memory held by this transaction until ``release``: a job cannot await, so it
    waits on the server, and the events are threads' (the job may run in a thread of its
    own)."""
    transaction.lock_people([ALICE.owner])
    held.set()
    hold_until(transaction.session, release.is_set)


async def test_a_person_held_by_one_process_waits_in_the_other(
    two_processes: tuple[Store, Store],
) -> None:
    first, second = two_processes
    held, release = threading.Event(), threading.Event()
    order: list[str] = []

    def hold_alice_until_done(transaction: StoreTransaction) -> None:
        hold_alice(held, release, transaction)
        order.append("first done")

    def alice_elsewhere(transaction: StoreTransaction) -> None:
        transaction.lock_people([ALICE.owner])
        order.append("second has alice")

    holding = asyncio.create_task(first.write(hold_alice_until_done))
    try:
        assert await asyncio.to_thread(held.wait, 10)
        waiting = asyncio.create_task(second.write(alice_elsewhere))
        async with asyncio.timeout(5):  # another person is not held up
            await second.write(lambda transaction: transaction.lock_people([BOB.owner]))
        await asyncio.sleep(0.3)
        assert order == []
    finally:
        release.set()
    await asyncio.gather(holding, waiting)
    assert order == ["first done", "second has alice"]


async def not_called(pending: PendingWrite, worker: str) -> bool:
    raise AssertionError("the test claims rows; it processes none")


def enqueue_hello(transaction: StoreTransaction) -> None:
    for scope in (ALICE, BOB):
        transaction.pending.enqueue(scope, "hello", message_time=NOW, now=NOW)


async def test_a_claim_skips_a_person_another_process_is_changing(
    two_processes: tuple[Store, Store],
) -> None:
    first, second = two_processes
    await first.write(enqueue_hello)
    queue = QueueWorker(
        second,
        not_called,
        lease=timedelta(minutes=15),
        clock=lambda: NOW,
        concurrency=1,
    )
    held, release = threading.Event(), threading.Event()
    # Alice held by the first process, e.g. a forget in progress.
    holding = asyncio.create_task(first.write(partial(hold_alice, held, release)))
    try:
        assert await asyncio.to_thread(held.wait, 10)
        claimed = await queue.claim()
        assert claimed is not None and claimed.owner == BOB.owner
        assert await queue.claim() is None  # Alice held, Bob busy
    finally:
        release.set()
    await holding
    claimed = await queue.claim()
    assert claimed is not None and claimed.owner == ALICE.owner
