"""The one writer batches the index writes of store transactions that wait for the turn at
once (SQLite and LanceDB), and keeps every guarantee of one write after each commit: the
index follows the commit order, a caller of ``Store.write`` finds its rows written once
it returns, a forget erases what came before it, and whoever holds the turn without being a
store transaction, a reply, or a cancelled caller never meets a write left pending."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import event

from memory.index import IndexedFact, LanceFactIndex
from memory.priority import Priority
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
DIMENSION = 8
SECRET = "zqxjbatchvv"


class RecordingIndex:
    """The real LanceDB index, recording each write that reaches it (test double: a
    recorder in front of the real thing)."""

    def __init__(self, inner: LanceFactIndex) -> None:
        self.inner = inner
        self.writes: list[tuple[str, list[int]]] = []

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        if facts:
            self.writes.append(("upsert", [fact.fact_id for fact in facts]))
        await self.inner.upsert(facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        if fact_ids:
            self.writes.append(("delete", list(fact_ids)))
        await self.inner.delete(fact_ids)

    async def erase(self, fact_ids: Sequence[int]) -> None:
        self.writes.append(("erase", list(fact_ids)))
        await self.inner.erase(fact_ids)

    async def indexed(self) -> set[int]:
        return set(await self.inner.indexed_models())


@pytest.fixture
async def index(tmp_path: Path) -> AsyncIterator[RecordingIndex]:
    inner = await LanceFactIndex.open(tmp_path / "index", dimension=DIMENSION)
    yield RecordingIndex(inner)
    await inner.aclose()


def row(fact_id: int, text: str, seed: int) -> IndexedFact:
    vector = np.random.default_rng(seed).random(DIMENSION, dtype=np.float32)
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, text, vector, "m")


@asynccontextmanager
async def turn_held(store: Store) -> AsyncIterator[None]:
    """The writer's turn held until the block ends: transactions started inside wait for it
    at once."""
    held, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with store.database.writing(Priority.BACKGROUND):
            held.set()
            await release.wait()

    holder = asyncio.create_task(hold())
    await held.wait()
    yield
    await asyncio.sleep(0.05)  # every task started inside now waits for the turn
    release.set()
    await holder


def learned(text: str, inside: Callable[[], object], transaction: StoreTransaction) -> int:
    fact = transaction.facts.add(ALICE, NewFact(text))
    transaction.index.upsert([row(fact.id, text, fact.id)])
    inside()
    return fact.id


async def learn(
    store: Store,
    index: RecordingIndex,
    text: str,
    *,
    priority: Priority = Priority.REPLY,
    found_on_leaving: dict[str, bool] | None = None,
    inside: Callable[[], object] = lambda: None,
) -> int:
    """One fact learned and indexed in one transaction (``inside`` called in it); whether
    its row was in the index as ``Store.write`` returned."""
    fact_id = await store.write(partial(learned, text, inside), index=index, priority=priority)
    if found_on_leaving is not None:
        found_on_leaving[text] = fact_id in await index.indexed()
    return fact_id


def forget_everything(transaction: StoreTransaction) -> tuple[int, ...]:
    """Alice's forget of everything; the facts it erased."""
    erased = transaction.forget.everything(ALICE)
    transaction.forgotten(erased.fact_ids)
    return erased.fact_ids


async def test_transactions_waiting_at_once_share_one_index_write(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    found: dict[str, bool] = {}
    async with turn_held(sqlite_store):
        tasks = [
            asyncio.create_task(learn(sqlite_store, index, f"fact {n}", found_on_leaving=found))
            for n in range(3)
        ]
    fact_ids = await asyncio.gather(*tasks)
    assert index.writes == [("upsert", fact_ids)]
    assert found == {"fact 0": True, "fact 1": True, "fact 2": True}


async def test_the_batch_applies_the_writes_in_commit_order(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    kept, dropped = await learn(sqlite_store, index, "kept"), await learn(sqlite_store, index, "x")
    index.writes.clear()

    def changed(
        deletes: list[int], upserts: list[IndexedFact], transaction: StoreTransaction
    ) -> None:
        transaction.index.delete(deletes)
        transaction.index.upsert(upserts)

    async def change(deletes: list[int], upserts: list[IndexedFact]) -> None:
        await sqlite_store.write(partial(changed, deletes, upserts), index=index)

    async with turn_held(sqlite_store):
        tasks = [
            asyncio.create_task(change([kept], [row(dropped, "x again", 1)])),
            asyncio.create_task(change([], [row(kept, "kept, restored", 2)])),
            asyncio.create_task(change([dropped], [])),
        ]
    await asyncio.gather(*tasks)
    assert index.writes == [("delete", [dropped]), ("upsert", [kept])]
    assert await index.indexed() == {kept}
    stored = await index.inner.stored_vectors([kept])
    np.testing.assert_array_equal(stored[kept].vector, row(kept, "", 2).vector)


async def test_a_forget_after_waiting_writes_leaves_nothing_of_them_in_the_index(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    async def forget_all() -> tuple[list[int], list[str], set[int]]:
        erased = await sqlite_store.write(forget_everything, index=index)
        # Its caller goes on only now: nothing of the fact is left in any index file.
        return (
            list(erased),
            files_containing(index.inner.path, SECRET),
            await index.indexed(),
        )

    async with turn_held(sqlite_store):
        secret = asyncio.create_task(learn(sqlite_store, index, f"{SECRET} is my passphrase"))
        forget = asyncio.create_task(forget_all())
    erased, files, indexed = await forget
    assert erased == [await secret]
    assert (files, indexed) == ([], set())
    assert index.writes == [("erase", erased)]  # the secret's row was never written
    assert files_containing(index.inner.path, SECRET) == []


async def test_a_forget_ends_its_batch_so_an_id_given_again_after_it_keeps_its_row(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    """SQLite gives the id of the newest fact, once erased, to the next fact: the erasure is
    written before that fact's row, not after it."""
    forgotten = await learn(sqlite_store, index, "forgotten")

    async with turn_held(sqlite_store):
        forget = asyncio.create_task(sqlite_store.write(forget_everything, index=index))
        learned = asyncio.create_task(learn(sqlite_store, index, "learned after"))
    await forget
    assert await learned == forgotten
    assert await index.indexed() == {forgotten}


async def test_a_holder_of_the_turn_that_is_no_store_transaction_sees_the_rows_written(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    seen: list[set[int]] = []

    async def storage_step() -> None:
        async with sqlite_store.database.writing(Priority.BACKGROUND):
            seen.append(await index.indexed())

    async with turn_held(sqlite_store):
        learned = asyncio.create_task(learn(sqlite_store, index, "fact"))
        step = asyncio.create_task(storage_step())
    await asyncio.gather(learned, step)
    assert seen == [{learned.result()}]


async def test_a_reply_waits_for_no_background_transaction_to_write_its_rows(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    """A reply that comes while a background job runs joins its commit, and that commit is
    made before the background job behind begins: the reply's caller waits for none."""
    happened: list[str] = []  # in the writer's thread: jobs beginning, commits made
    assert sqlite_store.database.write_engine is not None
    event.listen(sqlite_store.database.write_engine, "commit", lambda _: happened.append("commit"))
    loop = asyncio.get_running_loop()
    replying: list[asyncio.Task[int]] = []

    async def reply_comes() -> None:
        replying.append(asyncio.create_task(learn(sqlite_store, index, "reply")))
        await asyncio.sleep(0)  # the reply's job now waits for the writer

    def second(tx: StoreTransaction) -> None:
        happened.append("background second began")
        tx.set_setting("second", "done")

    async with turn_held(sqlite_store):
        background = [
            asyncio.create_task(
                learn(
                    sqlite_store,
                    index,
                    "background first",
                    priority=Priority.BACKGROUND,
                    inside=lambda: asyncio.run_coroutine_threadsafe(reply_comes(), loop).result(),
                )
            ),
            asyncio.create_task(sqlite_store.write(second, priority=Priority.BACKGROUND)),
        ]
    await asyncio.gather(*background)
    await replying[0]
    assert happened == ["commit", "background second began", "commit"]
    assert len(await index.indexed()) == 2
    assert [kind for kind, _ in index.writes] == ["upsert"]  # the first's and the reply's


async def test_replies_waiting_at_once_go_on_before_the_waiting_background(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    order: list[str] = []

    async def then(name: str, priority: Priority) -> None:
        await learn(sqlite_store, index, name, priority=priority)
        order.append(name)

    async with turn_held(sqlite_store):
        tasks = [
            asyncio.create_task(then("background", Priority.BACKGROUND)),
            asyncio.create_task(then("reply 1", Priority.REPLY)),
            asyncio.create_task(then("reply 2", Priority.REPLY)),
        ]
    await asyncio.gather(*tasks)
    assert order == ["reply 1", "reply 2", "background"]
    assert [kind for kind, _ in index.writes] == ["upsert", "upsert"]  # replies', then its


async def test_rows_of_a_caller_cancelled_while_it_waits_for_the_commit_are_written(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    """The first transaction's caller waits for the commit it shares with the one behind;
    cancelled meanwhile, its rows are committed and written all the same."""
    first: list[asyncio.Task[int]] = []
    loop = asyncio.get_running_loop()  # a job does not touch the loop: it asks it to cancel
    async with turn_held(sqlite_store):
        first.append(asyncio.create_task(learn(sqlite_store, index, "cancelled")))
        behind = asyncio.create_task(
            learn(
                sqlite_store,
                index,
                "behind",
                inside=lambda: loop.call_soon_threadsafe(first[0].cancel),
            )
        )
    behind_id = await asyncio.wait_for(behind, 5)
    assert first[0].cancelled()
    assert await index.indexed() == {behind_id - 1, behind_id}
    assert index.writes == [("upsert", [behind_id - 1, behind_id])]


async def test_a_job_whose_caller_is_cancelled_while_it_waits_is_never_run(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    async with turn_held(sqlite_store):
        first = asyncio.create_task(learn(sqlite_store, index, "first"))
        behind = asyncio.create_task(learn(sqlite_store, index, "behind"))
        await asyncio.sleep(0)
        behind.cancel()
    fact_id = await asyncio.wait_for(first, 5)
    assert behind.cancelled()
    assert await index.indexed() == {fact_id}
    texts = await sqlite_store.read(
        lambda tx: [fact.text for fact in tx.facts.list_in_scope(ALICE)]
    )
    assert texts == ["first"]


async def test_a_holder_cancelled_while_it_waits_never_holds_the_writer(
    sqlite_store: Store, index: RecordingIndex
) -> None:
    holds: list[str] = []

    async def storage_step() -> None:
        async with sqlite_store.database.writing(Priority.BACKGROUND):
            holds.append("held")

    async with turn_held(sqlite_store):
        step = asyncio.create_task(storage_step())
        await asyncio.sleep(0)
        step.cancel()
        learned = asyncio.create_task(learn(sqlite_store, index, "after"))
    assert await asyncio.wait_for(learned, 5) in await index.indexed()
    assert step.cancelled() and holds == []
