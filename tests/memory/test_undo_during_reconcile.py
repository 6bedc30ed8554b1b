"""An undo that restores a fact between reconcile's re-reading of it (not active: its row is
stale) and its deleting of that row keeps its row: the fact stays findable.

On SQLite reconcile re-reads and deletes the row in one turn of the store's writer (the
row deleted after the commit, within the turn): the undo's transaction waits for the turn,
so its row comes after the delete. On
PostgreSQL the undo runs in another process (a second store on the same database), and
reconcile re-reads and deletes in one transaction that holds the person's lock: the undo
waits for it. Each order is forced by an index double that starts the undo when reconcile's
delete reaches it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TypeVar

from sqlalchemy.orm import Session

from memory.embedding import FastEmbedEmbedder, Vectors
from memory.index import LanceFactIndex, VectorIndex
from memory.indexing import Reconcilable, reconcile, to_indexed
from memory.llm import ScriptedLanguageModel
from memory.priority import Priority
from memory.records import Action, Actor, FactStatus, NewFact
from memory.scope import Scope
from memory.store import EventDraft, Store, StoreTransaction, utc_now
from memory.store.vectors import PgVectorIndex, PgVectorWrites
from memory.store.write_thread import Commit
from memory.write import MemoryWriter, WriteSettings
from tests.memory.lock_waits import hold_until, lock_waited_for_in
from tests.memory.paused_parts import PausedIndex
from tests.servers.postgres import PostgresServer

ALICE = Scope("console:alice", "console:room1")
PARIS = "I live in Paris"
T = TypeVar("T")


def observe_turns(store: Store) -> asyncio.Event:
    """Set when a reply's transaction asks the store's writer for its turn (test double: an
    observer of the real writer)."""
    asked = asyncio.Event()
    run = store.database.run

    async def observed(job: Callable[[Session, Commit], T], priority: Priority) -> T:
        if priority is Priority.REPLY:
            asked.set()
        return await run(job, priority)

    store.database.run = observed  # type: ignore[method-assign]
    return asked


class UndoAtDelete(PausedIndex):
    """The real index, whose delete first lets ``undo`` run: until it is done, or (``asked``)
    it waits for its turn to write (test double for an undo arriving then)."""

    def __init__(
        self,
        inner: Reconcilable,
        undo: Callable[[], Awaitable[object]],
        asked: asyncio.Event | None = None,
    ) -> None:
        super().__init__(inner)
        self.gate.set()
        self._undo = undo
        self._asked = asked or asyncio.Event()
        self.undo: asyncio.Task[object] | None = None

    async def delete(self, fact_ids: Sequence[int]) -> None:
        if self.undo is None:
            self.undo = asyncio.ensure_future(self._undo())
            asked = asyncio.ensure_future(self._asked.wait())
            await asyncio.wait([self.undo, asked], return_when=asyncio.FIRST_COMPLETED)
            asked.cancel()
        await self.inner.delete(fact_ids)


def add_paris(vectors: Vectors, model: str, transaction: StoreTransaction) -> int:
    fact = transaction.facts.add(ALICE, NewFact(PARIS))
    transaction.index.upsert(to_indexed([fact], vectors, model))
    return fact.id


async def add_indexed(store: Store, index: VectorIndex, embedder: FastEmbedEmbedder) -> int:
    vectors = await embedder.embed([PARIS], "document")  # before: a job makes no model call
    return await store.write(partial(add_paris, vectors, embedder.model_name), index=index)


def delete_paris(fact_id: int, unindex: bool, transaction: StoreTransaction) -> None:
    transaction.lock_people([ALICE.owner])
    transaction.facts.set_status(ALICE, fact_id, FactStatus.DELETED, valid_to=utc_now())
    transaction.facts.record_event(
        ALICE,
        EventDraft(final_action=Action.DELETE, actor=Actor.PIPELINE, fact_id=fact_id),
    )
    if unindex:
        transaction.index.delete([fact_id])


async def delete_by_pipeline(store: Store, fact_id: int, *, index: VectorIndex | None) -> None:
    """The pipeline deletes the fact (an undoable event); without ``index`` its row stays,
    as after a crash between the commit and LanceDB's write."""
    await store.write(partial(delete_paris, fact_id, index is not None), index=index)


async def test_an_undo_between_reconciles_reread_and_delete_keeps_its_row(
    sqlite_store: Store, embedder: FastEmbedEmbedder, tmp_path: Path
) -> None:
    lance = await LanceFactIndex.open(tmp_path / "index", dimension=384)
    writer = MemoryWriter(sqlite_store, lance, embedder, ScriptedLanguageModel(), WriteSettings())
    paris = await add_indexed(sqlite_store, lance, embedder)
    await delete_by_pipeline(sqlite_store, paris, index=None)  # its row is stale now
    index = UndoAtDelete(lance, lambda: writer.undo(ALICE), observe_turns(sqlite_store))

    report = await reconcile(sqlite_store, index, embedder)
    assert index.undo is not None
    assert await index.undo is not None

    assert report.stale == 1
    assert set(await lance.indexed_models()) == {paris}
    assert (await reconcile(sqlite_store, lance, embedder, dry_run=True)).in_step
    await lance.aclose()


class DeleteAfter(PgVectorWrites):
    """pgvector's writes in the store's transaction (a job: no await), whose delete first
    calls ``before`` with the transaction's session."""

    def __init__(self, session: Session, before: Callable[[Session], None]) -> None:
        super().__init__(session)
        self._before = before

    def delete(self, fact_ids: Sequence[int]) -> None:
        self._before(self.session)
        super().delete(fact_ids)


async def test_on_postgresql_an_undo_in_another_process_between_reread_and_delete(
    postgres: PostgresServer, embedder: FastEmbedEmbedder
) -> None:
    """pgvector lists only active facts' rows, so the row is stale only if the fact was
    restored between reconcile's two reads and deleted again before its re-read: the double
    does that in the other process, then starts the undo of that delete when reconcile's
    delete comes, and lets it run until it is done or waits for the person's lock."""
    url = await postgres.fresh_database()
    reconciling_store, other_store = await Store.open(url), await Store.open(url)
    try:
        other_index = await PgVectorIndex.open(other_store.database, dimension=384)
        writer = MemoryWriter(
            other_store, other_index, embedder, ScriptedLanguageModel(), WriteSettings()
        )
        paris = await add_indexed(other_store, other_index, embedder)
        await delete_by_pipeline(other_store, paris, index=other_index)
        undo: list[asyncio.Task[object]] = []
        loop = asyncio.get_running_loop()

        def start_undo() -> None:
            undo.append(asyncio.ensure_future(writer.undo(ALICE)))

        def undo_until_done_or_waiting(session: Session) -> None:
            """Inside reconcile's job, which holds Alice's lock: the job asks the loop to
            start the undo (it touches no loop itself) and stays open until it is done or
            waits for the lock."""
            loop.call_soon_threadsafe(start_undo)
            hold_until(
                session, lambda: bool(undo) and (undo[0].done() or lock_waited_for_in(session))
            )

        class RestoredBetweenReads(PgVectorIndex):
            async def indexed_models(self) -> dict[int, str]:
                await writer.undo(ALICE)
                indexed = await super().indexed_models()
                await delete_by_pipeline(other_store, paris, index=other_index)
                return indexed

            def writes_in(self, session: Session) -> PgVectorWrites:
                super().writes_in(session)
                return DeleteAfter(session, undo_until_done_or_waiting)

        index = RestoredBetweenReads(reconciling_store.database)
        report = await reconcile(reconciling_store, index, embedder)
        assert await undo[0] is not None

        assert report.stale == 1
        assert set(await other_index.indexed_models()) == {paris}
        assert (await reconcile(reconciling_store, other_index, embedder, dry_run=True)).in_step
    finally:
        await reconciling_store.aclose()
        await other_store.aclose()
