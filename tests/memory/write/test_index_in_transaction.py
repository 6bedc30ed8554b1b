"""The index rows of a write go with the write's store transaction.

pgvector (PostgreSQL) writes them inside it: facts and vectors commit together or not at
all, and reconcile finds nothing to do. LanceDB writes them after the commit; a failure
there leaves the database's change standing, is logged once, and reconcile repairs it.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from sqlalchemy import func, select

from memory.embedding import FastEmbedEmbedder
from memory.embedding.base import Vectors
from memory.errors import StoreError, VectorIndexError
from memory.index import IndexedFact, LanceFactIndex
from memory.indexing import Reconcilable, reconcile
from memory.llm import ScriptedLanguageModel
from memory.records import FactStatus, NewFact
from memory.store import Store, StoreTransaction
from memory.store.schema import FactRow, PendingWriteRow
from memory.store.vectors import PgVectorIndex
from tests.memory.index_damage import damage
from tests.memory.write.helpers import ALICE, active_texts, decided, extracted, make_writer, say
from tests.servers.postgres import PostgresServer


async def active_ids(store: Store) -> set[int]:
    facts = await store.read(lambda transaction: transaction.facts.list_in_scope(ALICE))
    return {fact.id for fact in facts}


def add_with_row(text: str, vector: Vectors, transaction: StoreTransaction) -> None:
    """A fact and its index row, in one transaction."""
    fact = transaction.facts.add(ALICE, NewFact(text))
    transaction.index.upsert([IndexedFact(fact.id, fact.owner, fact.room, text, vector, "m")])


def count_facts_and_queued(transaction: StoreTransaction) -> tuple[int | None, int | None]:
    facts = transaction.session.scalar(select(func.count(FactRow.id)))
    queued = transaction.session.scalar(select(func.count(PendingWriteRow.id)))
    return facts, queued


async def test_after_every_kind_of_write_the_index_holds_the_active_facts(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(
        [
            extracted("I live in Paris", "I play chess"),
            extracted("I live in Berlin"),
            decided((1, "UPDATE", 1)),
            extracted("I no longer play chess"),
            decided((1, "DELETE", 1)),
        ]
    )
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I live in Paris and I play chess")
    await say(writer, ALICE, "I moved to Berlin")
    await say(writer, ALICE, "I no longer play chess")
    assert await active_texts(store, ALICE) == ["I live in Berlin"]
    assert set(await index.indexed_models()) == await active_ids(store)

    assert await writer.undo(ALICE) is not None  # chess is back
    assert set(await index.indexed_models()) == await active_ids(store)
    assert len(await active_ids(store)) == 2
    report = await reconcile(store, index, embedder, dry_run=True)
    assert report.in_step


async def test_postgres_fact_and_vector_commit_together_or_not_at_all(
    postgres: PostgresServer, embedder: FastEmbedEmbedder
) -> None:
    store = await Store.open(await postgres.fresh_database())
    index = await PgVectorIndex.open(store.database, dimension=384)
    writer = make_writer(store, index, embedder, ScriptedLanguageModel([extracted("I'm 34")]))
    # A real failure of the vector write, after the fact's own INSERT has succeeded.
    await set_refusal(store, "ADD CONSTRAINT refuse_every_row CHECK (false) NOT VALID")
    try:
        paris = "I live in Paris"
        vector = (await embedder.embed([paris]))[0]
        with pytest.raises(StoreError, match="refuse_every_row"):
            await store.write(partial(add_with_row, paris, vector), index=index)
        await say(writer, ALICE, "I'm 34 years old")
        facts, queued = await store.read(count_facts_and_queued)
        assert (facts, queued) == (0, 1)  # nothing half-written; the message waits for a retry
    finally:
        await set_refusal(store, "DROP CONSTRAINT refuse_every_row")
        await writer.aclose()
        await store.aclose()


async def set_refusal(store: Store, change: str) -> None:
    async with store.database.engine.begin() as connection:
        await connection.exec_driver_sql(f"ALTER TABLE fact_vectors {change}")


async def test_lance_written_after_the_commit_logs_a_failure_and_keeps_the_write(
    sqlite_store: Store,
    lance_index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    damage(lance_index.path, "a file in its place")
    llm = ScriptedLanguageModel([extracted("I live in Paris")])
    writer = make_writer(sqlite_store, lance_index, embedder, llm)
    await say(writer, ALICE, "I live in Paris")
    assert await active_texts(sqlite_store, ALICE) == ["I live in Paris"]
    assert "the vector index is behind the database until reconcile repairs it" in caplog.text
    await writer.aclose()


async def test_a_postgres_index_refuses_a_transaction_on_another_database(
    postgres: PostgresServer,
) -> None:
    first = await Store.open(await postgres.create_database())
    second = await Store.open(await postgres.create_database())
    index = PgVectorIndex(first.database)
    try:
        with pytest.raises(VectorIndexError, match="facts' own PostgreSQL database"):
            await second.write(lambda transaction: None, index=index)
    finally:
        await first.aclose()
        await second.aclose()


async def test_index_rows_in_a_transaction_opened_without_an_index_are_refused(
    store: Store,
) -> None:
    row = IndexedFact(1, ALICE.owner, ALICE.room, "x", np.ones(384, dtype=np.float32), "m")

    def add_and_index(transaction: StoreTransaction) -> None:
        transaction.facts.add(ALICE, NewFact("x"))
        transaction.index.upsert([row])

    with pytest.raises(StoreError, match=r"opened without one: use store.write\(job, index="):
        await store.write(add_and_index)
    count = await store.read(
        lambda transaction: transaction.facts.count(ALICE, statuses=list(FactStatus))
    )
    assert count == 0
