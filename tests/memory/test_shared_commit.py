"""Store transactions waiting for the writer's turn at once share one SQLite commit, each in
a savepoint of its own: one that fails is rolled back alone, and when SQLite rolls back the
whole transaction (a full disk), every member fails and nothing of any of them is kept."""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

import pytest
from sqlalchemy import event, text

from memory.errors import StorageFullError
from memory.records import FactStatus, NewFact
from memory.store import Store, StoreTransaction
from tests.memory.full_disk import fill_the_disk
from tests.memory.test_index_batch import ALICE, turn_held


def add_fact(text: str, then_raise: bool, transaction: StoreTransaction) -> int:
    fact = transaction.facts.add(ALICE, NewFact(text))
    if then_raise:
        raise ValueError(f"the caller of {text!r} changed its mind")
    return fact.id


async def add(store: Store, text: str, *, then_raise: bool = False) -> int:
    return await store.write(partial(add_fact, text, then_raise))


async def stored(store: Store) -> list[str]:
    facts = await store.read(lambda reading: reading.facts.list_in_scope(ALICE))
    return [fact.text for fact in facts]


async def test_transactions_waiting_at_once_share_one_commit(sqlite_store: Store) -> None:
    commits: list[object] = []

    def committed(connection: Any) -> None:
        commits.append(connection)

    assert sqlite_store.database.write_engine is not None
    event.listen(sqlite_store.database.write_engine, "commit", committed)
    async with turn_held(sqlite_store):
        tasks = [asyncio.create_task(add(sqlite_store, f"fact {n}")) for n in range(3)]
    await asyncio.gather(*tasks)
    assert len(commits) == 1
    assert sorted(await stored(sqlite_store)) == ["fact 0", "fact 1", "fact 2"]


async def test_a_transaction_that_fails_is_rolled_back_alone(sqlite_store: Store) -> None:
    async with turn_held(sqlite_store):
        tasks = [
            asyncio.create_task(add(sqlite_store, "kept before")),
            asyncio.create_task(add(sqlite_store, "dropped", then_raise=True)),
            asyncio.create_task(add(sqlite_store, "kept after")),
        ]
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[1], ValueError)
    assert [type(result) for result in (results[0], results[2])] == [int, int]
    assert sorted(await stored(sqlite_store)) == ["kept after", "kept before"]


async def test_what_a_failed_transaction_changed_is_not_committed_by_the_others(
    sqlite_store: Store,
) -> None:
    """The last member of a commit deletes a fact (flushed) and changes a setting (not yet
    flushed), then fails: the commit made for the member before it keeps neither."""
    kept = await add(sqlite_store, "I have a cat")

    def change_then_fail(transaction: StoreTransaction) -> None:
        transaction.facts.set_status(ALICE, kept, FactStatus.DELETED)
        transaction.set_setting("greeting", "hello")
        raise ValueError("the caller changed its mind")

    async with turn_held(sqlite_store):
        before = asyncio.create_task(add(sqlite_store, "I play chess"))
        failing = asyncio.create_task(sqlite_store.write(change_then_fail))
    await before
    with pytest.raises(ValueError, match="changed its mind"):
        await failing
    assert sorted(await stored(sqlite_store)) == ["I have a cat", "I play chess"]
    assert await sqlite_store.read(lambda reading: reading.get_setting("greeting")) is None


async def test_a_full_disk_fails_every_transaction_of_the_commit(sqlite_store: Store) -> None:
    """A write too large for the space left makes SQLite roll back the whole transaction,
    the fact written before it in the same commit too: both callers are told, neither is
    told "stored" for what is gone."""
    await fill_the_disk(sqlite_store)
    await sqlite_store.write(  # room for a fact, not for a blob
        lambda transaction: transaction.session.execute(
            text("DELETE FROM filler WHERE b = zeroblob(65536)")
        )
    )

    def too_large(transaction: StoreTransaction) -> None:
        transaction.session.execute(text("INSERT INTO filler VALUES (zeroblob(4e6))"))

    async with turn_held(sqlite_store):
        small = asyncio.create_task(add(sqlite_store, "I have a cat"))
        large = asyncio.create_task(sqlite_store.write(too_large))
    for task in (small, large):
        with pytest.raises(StorageFullError, match="disk holding the database is full"):
            await task
    assert await stored(sqlite_store) == []
    await add(sqlite_store, "I have a cat")  # alone, it fits
    assert await stored(sqlite_store) == ["I have a cat"]
