"""The composition root starts and stops the maintenance jobs and the queue worker with the bot."""

from __future__ import annotations

import asyncio
import threading
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

from bot.messages import IncomingMessage
from bot.scheduler import (
    CONSOLIDATION,
    PENDING_RETRY,
    PURGE,
    RECONCILE,
    STORAGE,
    Job,
    MaintenanceScheduler,
)
from memory.embedding import Embedder
from memory.index import LanceFactIndex
from memory.indexing import to_indexed
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from tests.bot.core.harness import START, make_config, open_harness
from tests.memory.test_index_batch import ALICE, turn_held
from tests.memory.write.gated import GUARD_SECONDS, is_extraction, until


async def test_start_schedules_every_job_and_close_stops_them(
    tmp_path: Path, embedder: Embedder
) -> None:
    harness = await open_harness(tmp_path, embedder)
    scheduler = harness.app.scheduler
    assert not scheduler.running
    await harness.app.start()
    assert scheduler.running
    assert set(scheduler.next_run_times()) == {
        CONSOLIDATION,
        RECONCILE,
        PENDING_RETRY,
        PURGE,
        STORAGE,
    }
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


async def test_start_up_answers_at_once_while_queued_writes_wait_for_a_hanging_model(
    tmp_path: Path, embedder: Embedder
) -> None:
    config = make_config(tmp_path / "data")
    people = [Scope(f"matrix:person{number}", "matrix:dm") for number in range(6)]
    # An earlier run left writes queued for six people, one claimed by its dead worker.
    store = await Store.open(config.storage.database_path)

    def queue_and_claim_one(tx: StoreTransaction) -> None:
        for person in people:
            tx.pending.enqueue(person, "I am a nurse.", message_time=START, now=START)
        tx.pending.claim_next(
            "dead-process", now=START, until=START + timedelta(days=1), passing_error=""
        )

    await store.write(queue_and_claim_one)
    await store.aclose()

    harness = await open_harness(tmp_path, embedder, config=config, held=is_extraction)
    try:
        # The model hangs until the test lets it go: had start-up waited for the queue, the
        # time limit (only a guard) would end the test.
        await asyncio.wait_for(harness.app.start(), GUARD_SECONDS)
        message = IncomingMessage(
            "matrix", "matrix:person0", "P", "matrix:dm", "!memory list", START, True
        )
        (listing,) = await asyncio.wait_for(harness.app.core.handle(message), GUARD_SECONDS)
        assert listing.text == "I don't remember anything about you here yet."
        # Meanwhile the worker took the queue up (its one model call at a time hangs).
        await until(lambda: len(harness.llm.waiting) == 1)
    finally:
        await harness.app.aclose()
    store = await Store.open(config.storage.database_path)
    try:
        queued = await store.read(lambda tx: tx.pending.due(datetime.max.replace(tzinfo=UTC)))
    finally:
        await store.aclose()
    # Cut off by the shutdown: still queued, unclaimed, for the next start.
    assert [(row.owner, row.attempts, row.claimed_by) for row in queued] == [
        (person.owner, 0, None) for person in people
    ]


def said(person: str, text: str) -> IncomingMessage:
    return IncomingMessage(
        "console", f"console:{person}", person.title(), "console:dm", text, START, True
    )


async def test_close_writes_the_index_rows_of_callers_cancelled_while_they_waited(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Two jobs share a commit, the second still running as the bot closes; their callers
    are cancelled while they wait for it: closing makes the commit and writes their rows
    all the same, into an index not yet closed."""
    harness = await open_harness(tmp_path, embedder)
    app = harness.app
    running, release = threading.Event(), threading.Event()

    texts = ["I row", "I swim"]
    # Embedded first: a job makes no model call, and the callers must queue at once.
    vectors = await app.embedder.embed(texts, "document")

    def add(number: int, transaction: StoreTransaction) -> int:
        fact = transaction.facts.add(ALICE, NewFact(texts[number]))
        row = vectors[number : number + 1]
        transaction.index.upsert(to_indexed([fact], row, app.embedder.model_name))
        if number == len(texts) - 1:  # the commit stays open until released
            running.set()
            release.wait(10)
        return fact.id

    async with turn_held(app.store):
        callers = [
            asyncio.create_task(app.store.write(partial(add, number), index=app.index))
            for number in range(len(texts))
        ]
    await asyncio.to_thread(running.wait, 10)
    for caller in callers:
        caller.cancel()  # both jobs ran or run: they wait for the commit
    results = await asyncio.gather(*callers, return_exceptions=True)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
    closing = asyncio.create_task(app.aclose())
    await asyncio.sleep(0.2)
    release.set()
    await closing
    store = await Store.open(app.store.database.path)
    index = await LanceFactIndex.open(tmp_path / "data" / "index", dimension=384)
    try:
        learned = {fact.id for fact in await store.read(lambda tx: tx.facts.admin_active_facts())}
        assert len(learned) == 2
        assert set(await index.indexed_models()) == learned
    finally:
        await index.aclose()
        await store.aclose()
