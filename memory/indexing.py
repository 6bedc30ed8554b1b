"""Keeping the vector index in step with the database, and repairing it (reconcile).

LanceDB's rows are written after the commit, so a crash between leaves them behind;
:func:`reconcile` repairs that, each write reading its facts again in a transaction of its
own, so a fact forgotten since is never written back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from memory.embedding.base import Embedder, Vectors
from memory.index.base import IndexedFact, IndexWrites, VectorIndex
from memory.priority import Priority
from memory.records import Fact
from memory.store import Store, StoreTransaction

log = logging.getLogger(__name__)


class Reconcilable(VectorIndex, Protocol):
    """An index as its owner (the composition root, reconcile, the storage job) sees it."""

    async def indexed_models(self) -> dict[int, str]:
        """Every indexed fact id with the embedding model that made its vector."""
        ...

    async def optimize(self) -> None:
        """Housekeeping after many small writes (compaction, old versions removed)."""
        ...


def to_indexed(facts: Sequence[Fact], vectors: Vectors, model: str) -> list[IndexedFact]:
    return [
        IndexedFact(fact.id, fact.owner, fact.room, fact.text, vector, model)
        for fact, vector in zip(facts, vectors, strict=True)
    ]


async def index_facts(
    index: IndexWrites,
    embedder: Embedder,
    facts: Sequence[Fact],
    vectors: Vectors | None = None,
) -> None:
    """Write active facts to the index, embedding them unless their vectors are given."""
    if not facts:
        return
    if vectors is None:
        vectors = await embedder.embed([fact.text for fact in facts], "document")
    await index.upsert(to_indexed(facts, vectors, embedder.model_name))


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    """What reconcile found (and, unless it was a dry run, repaired)."""

    missing: int
    stale: int
    reembedded: int
    dry_run: bool

    @property
    def in_step(self) -> bool:
        return self.missing == self.stale == self.reembedded == 0


async def reconcile(
    store: Store,
    index: Reconcilable,
    embedder: Embedder,
    *,
    dry_run: bool = False,
    batch_size: int = 256,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
) -> ReconcileReport:
    """Make the index hold exactly the active facts of SQLite, embedded by ``embedder``;
    ``on_progress(done, total)`` after each batch of facts embedded."""
    facts = await store.read(lambda transaction: transaction.facts.admin_active_facts())
    active = {fact.id: fact for fact in facts}
    indexed = await index.indexed_models()
    stale = [fact_id for fact_id in indexed if fact_id not in active]
    missing = [fact for fact_id, fact in active.items() if fact_id not in indexed]
    outdated = [
        fact
        for fact_id, fact in active.items()
        if fact_id in indexed and indexed[fact_id] != embedder.model_name
    ]
    report = ReconcileReport(len(missing), len(stale), len(outdated), dry_run)
    if dry_run:
        return report
    if not report.in_step:
        counts = (report.missing, report.stale, report.reembedded)
        log.info("reconcile: %d missing, %d stale, %d to re-embed", *counts)
        await _repair(store, index, embedder, stale, missing + outdated, batch_size, on_progress)
    async with store.database.writing(Priority.BACKGROUND):
        await index.optimize()
    return report


async def _repair(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    stale: list[int],
    to_embed: list[Fact],
    batch_size: int,
    on_progress: Callable[[int, int], None],
) -> None:
    if stale:
        job = partial(delete_still_stale, stale)
        await store.write(job, index=index, priority=Priority.BACKGROUND)
    for start in range(0, len(to_embed), batch_size):
        batch = to_embed[start : start + batch_size]
        vectors = await embedder.embed([fact.text for fact in batch], "document")
        await write_still_active(store, index, to_indexed(batch, vectors, embedder.model_name))
        on_progress(start + len(batch), len(to_embed))


def delete_still_stale(stale: list[int], transaction: StoreTransaction) -> None:
    """Delete the rows of the facts still not active, read again."""
    transaction.lock_people(transaction.facts.admin_owners(stale))
    active = transaction.facts.admin_active_ids(stale)
    transaction.index.delete([fact_id for fact_id in stale if fact_id not in active])


async def write_still_active(
    store: Store,
    index: IndexWrites,
    rows: list[IndexedFact],
    *,
    priority: Priority = Priority.BACKGROUND,
) -> None:
    """Write the rows whose facts are still active, read again (a forget or a commit may have
    come since they were read), and record the model that made them.

    For rows embedded after the transaction that made their facts active (reconcile, undo):
    an embedding is never made inside a transaction.
    """
    if rows:
        await store.write(partial(keep_still_active, rows), index=index, priority=priority)


def keep_still_active(rows: list[IndexedFact], transaction: StoreTransaction) -> None:
    transaction.lock_people({row.owner for row in rows})
    active = transaction.facts.admin_active_ids([row.fact_id for row in rows])
    kept = [row for row in rows if row.fact_id in active]
    transaction.index.upsert(kept)
    transaction.facts.set_embedding_model([row.fact_id for row in kept], rows[0].model)
