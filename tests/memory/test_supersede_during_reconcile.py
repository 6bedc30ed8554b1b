"""On PostgreSQL, a fact another process supersedes while reconcile re-embeds it gets no
vector row back from reconcile: only active facts have vectors.

Reconcile reads the facts, embeds them, then writes their rows in a transaction of its own
(:meth:`memory.store.vectors.PgVectorIndex.upsert`). Another process (a second store on the
same database, still on the earlier model, whose vectors alone it searches) moves Alice from
Paris to Berlin through the real write path, which deletes Paris's row in its commit. Two
orders are forced: the move commits before reconcile's write (the write reads the facts again
under Alice's lock and leaves Paris out; without the status in that read, as before, Paris
got its row back), or it arrives while reconcile's write holds Alice's lock (it waits for
that commit, then deletes the row written; without the lock, with the facts' rows locked
against deletion only, Paris got its row back).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from memory.embedding import FastEmbedEmbedder, HashingEmbedder
from memory.index import IndexedFact
from memory.indexing import reconcile
from memory.llm import LanguageModel, ScriptedLanguageModel
from memory.llm.scripted import Step
from memory.records import Fact, FactStatus
from memory.store import Database, Store
from memory.store.schema import FactVectorRow
from memory.store.vectors import PgVectorIndex, PgVectorWrites
from memory.write import MemoryWriter, WriteSettings
from tests.memory.lock_waits import hold_until, lock_waited_for_in
from tests.memory.paused_parts import PausedIndex
from tests.memory.write.gated import GatedLanguageModel, is_extraction, until
from tests.memory.write.helpers import ALICE, all_facts, decided, extracted, say, seed
from tests.servers.postgres import PostgresServer

MOVE = "I moved to Berlin"


def moving_to_berlin() -> list[Step]:
    """What a model answers to Alice's move: Berlin, which updates fact 1 (Paris)."""
    return [extracted("I live in Berlin"), decided((1, "UPDATE", 1))]


def earlier_model() -> HashingEmbedder:
    """The model before the configured one (test double), of the same dimension."""
    return HashingEmbedder(dimension=384, model_name="test/an-earlier-model")


async def paris_of_an_earlier_model(store: Store) -> Fact:
    """Paris with a vector that an earlier embedding model made: reconcile re-embeds it."""
    index = await PgVectorIndex.open(store.database, dimension=384)
    (paris,) = await seed(store, index, earlier_model(), ALICE, "I live in Paris")
    return paris


async def facts_with_vectors(store: Store) -> set[int]:
    """Every row in the vectors' table, whatever its fact's status."""
    query = select(FactVectorRow.fact_id)
    return await store.read(lambda transaction: set(transaction.session.scalars(query).all()))


async def check_only_berlin_has_a_vector(store: Store, embedder: FastEmbedEmbedder) -> None:
    facts = {fact.text: fact for fact in await all_facts(store, ALICE)}
    assert facts["I live in Paris"].status is FactStatus.SUPERSEDED
    assert facts["I live in Berlin"].status is FactStatus.ACTIVE
    assert await facts_with_vectors(store) == {facts["I live in Berlin"].id}
    # Berlin's row is of the earlier model: the next reconcile re-embeds it.
    report = await reconcile(store, PgVectorIndex(store.database), embedder, dry_run=True)
    assert (report.missing, report.stale, report.reembedded) == (0, 0, 1)


@pytest.fixture
async def two_stores(
    postgres: PostgresServer, embedder: FastEmbedEmbedder
) -> AsyncIterator[tuple[Store, Store]]:
    """Reconcile's process and another one on a fresh database, Paris of an earlier model."""
    url = await postgres.fresh_database()
    reconciling_store, other_store = await Store.open(url), await Store.open(url)
    try:
        await paris_of_an_earlier_model(other_store)
        yield reconciling_store, other_store
    finally:
        await reconciling_store.aclose()
        await other_store.aclose()


def writer_of(store: Store, model: LanguageModel) -> MemoryWriter:
    """The other process's writer, on the earlier model."""
    index = PgVectorIndex(store.database)
    return MemoryWriter(store, index, earlier_model(), model, WriteSettings())


async def test_a_fact_superseded_before_reconciles_write_gets_no_row(
    two_stores: tuple[Store, Store], embedder: FastEmbedEmbedder
) -> None:
    reconciling_store, other_store = two_stores
    writer = writer_of(other_store, ScriptedLanguageModel(moving_to_berlin()))
    index = PausedIndex(PgVectorIndex(reconciling_store.database))

    reconciling = asyncio.create_task(reconcile(reconciling_store, index, embedder))
    await index.upsert_entered.wait()  # Paris embedded and read again: still active
    await say(writer, ALICE, MOVE)
    index.gate.set()
    report = await reconciling

    assert report.reembedded == 1
    await check_only_berlin_has_a_vector(other_store, embedder)


class WritesAfter(PgVectorWrites):
    """pgvector's writes in a transaction (a job: no await), whose first upsert first calls
    ``before`` with the transaction's session."""

    def __init__(self, session: Session, before: Callable[[Session], None]) -> None:
        super().__init__(session)
        self._before: Callable[[Session], None] | None = before

    def upsert(self, facts: Sequence[IndexedFact]) -> None:
        if self._before is not None:
            before, self._before = self._before, None
            before(self.session)
        super().upsert(facts)


class WriteLettingOthersIn(PgVectorIndex):
    """The real index, whose own write first lets ``before`` run (test double for another
    process's commit arriving just then)."""

    def __init__(self, database: Database, before: Callable[[Session], None]) -> None:
        super().__init__(database)
        self._before = before

    def writes_in(self, session: Session) -> PgVectorWrites:
        return WritesAfter(super().writes_in(session).session, self._before)


async def test_a_fact_superseded_during_reconciles_write_loses_its_row_after_it(
    two_stores: tuple[Store, Store], embedder: FastEmbedEmbedder
) -> None:
    reconciling_store, other_store = two_stores
    # The decision waits until reconcile writes: the move is claimed and planned, and its
    # commit comes while reconcile's write is under way.
    model = GatedLanguageModel(
        moving_to_berlin(), held=lambda messages: not is_extraction(messages)
    )
    writer = writer_of(other_store, model)
    moving = asyncio.create_task(say(writer, ALICE, MOVE))
    await until(lambda: bool(model.waiting))

    loop = asyncio.get_running_loop()

    def commit_until_done_or_waiting(session: Session) -> None:
        """Inside reconcile's write, which holds Alice's lock: the job asks the loop to let
        the decision go (it touches no loop itself) and stays open until the move is done or
        waits for the lock."""
        loop.call_soon_threadsafe(model.open)
        hold_until(session, lambda: moving.done() or lock_waited_for_in(session))

    index = WriteLettingOthersIn(reconciling_store.database, commit_until_done_or_waiting)
    report = await reconcile(reconciling_store, index, embedder)
    await moving

    assert report.reembedded == 1
    await check_only_berlin_has_a_vector(other_store, embedder)
