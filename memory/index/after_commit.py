"""Index writes kept during a store transaction and made after its commit.

For an index outside the database (LanceDB files): the database is the truth and commits
first. The writes of the transactions that share a commit go together after it
(:class:`IndexBatch`, ``memory.store.write_thread.Commit``). A
failure afterwards leaves the index behind, which is logged here, once, for every write
path alike, and repaired by reconcile (at start-up, on its schedule, and by the
self-healing index); the committed change stands.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memory.errors import MemoryLayerError
from memory.index.base import IndexedFact, IndexWrites

log = logging.getLogger(__name__)


class AfterCommitWrites:
    """The index writes of one store transaction, kept until it commits."""

    def __init__(self, index: IndexWrites) -> None:
        self.index = index
        self.upserts: list[IndexedFact] = []
        self.deletes: list[int] = []
        self.erases: list[int] = []

    def upsert(self, facts: Sequence[IndexedFact]) -> None:
        self.upserts.extend(facts)

    def delete(self, fact_ids: Sequence[int]) -> None:
        self.deletes.extend(fact_ids)

    def erase(self, fact_ids: Sequence[int]) -> None:
        self.erases.extend(fact_ids)


class IndexBatch:
    """The index writes of transactions in the order they committed, written together: per
    index, the last row each fact was given, in one ``delete`` and one ``upsert``, then the
    facts a forget erased (a forget's transaction is the last of its batch)."""

    def __init__(self) -> None:
        # Per index (by identity): fact id -> its row, or None to delete it.
        self._rows: dict[int, tuple[IndexWrites, dict[int, IndexedFact | None]]] = {}
        self._erases: dict[int, tuple[IndexWrites, list[int]]] = {}

    def __bool__(self) -> bool:
        return bool(self._rows or self._erases)

    def add(self, writes: AfterCommitWrites) -> None:
        rows = self._rows.setdefault(id(writes.index), (writes.index, {}))[1]
        for fact_id in writes.deletes:
            rows[fact_id] = None
        for fact in writes.upserts:
            rows[fact.fact_id] = fact
        if writes.erases:
            for fact_id in writes.erases:
                rows.pop(fact_id, None)  # an erased fact's row is never written
            self._erases.setdefault(id(writes.index), (writes.index, []))[1].extend(writes.erases)

    async def write(self) -> None:
        """Write everything; failures of the index are logged, anything else is raised."""
        for index, rows in self._rows.values():
            await _write_rows(index, rows)
        for index, fact_ids in self._erases.values():
            await _erase(index, fact_ids)


async def _write_rows(index: IndexWrites, rows: dict[int, IndexedFact | None]) -> None:
    if not rows:
        return
    deletes = [fact_id for fact_id, row in rows.items() if row is None]
    upserts = [row for row in rows.values() if row is not None]
    try:
        await index.delete(deletes)
        await index.upsert(upserts)
    except MemoryLayerError as error:
        log.warning(
            "the vector index is behind the database until reconcile repairs it "
            "(%d rows to write, %d to delete): %s",
            len(upserts),
            len(deletes),
            error,
        )


async def _erase(index: IndexWrites, fact_ids: list[int]) -> None:
    try:
        await index.erase(fact_ids)
    except MemoryLayerError as error:
        log.error(
            "forgotten facts %s are erased in the database but not yet from the vector "
            "index (%s); the index heals from the database at the next reconcile",
            fact_ids,
            error,
        )
