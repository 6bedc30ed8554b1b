"""Index writes kept during a store transaction and made after its commit.

For an index outside the database (LanceDB files): the database is the truth and commits
first. A failure afterwards leaves the index behind, which is logged
here, once, for every write path alike, and repaired by reconcile (at start-up, on its
schedule, and by the self-healing index); the committed change stands.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memory.errors import MemoryLayerError
from memory.index.base import IndexedFact, IndexWrites

log = logging.getLogger(__name__)


class AfterCommitWrites:
    def __init__(self, index: IndexWrites) -> None:
        self._index = index
        self._upserts: list[IndexedFact] = []
        self._deletes: list[int] = []
        self._erases: list[int] = []

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        self._upserts.extend(facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        self._deletes.extend(fact_ids)

    async def erase(self, fact_ids: Sequence[int]) -> None:
        self._erases.extend(fact_ids)

    async def after_commit(self) -> None:
        await self._write()
        if not self._erases:
            return
        try:
            await self._index.erase(self._erases)
        except MemoryLayerError as error:
            log.error(
                "forgotten facts %s are erased in the database but not yet from the vector "
                "index (%s); the index heals from the database at the next reconcile",
                self._erases,
                error,
            )

    async def _write(self) -> None:
        if not (self._deletes or self._upserts):
            return
        try:
            await self._index.delete(self._deletes)
            await self._index.upsert(self._upserts)
        except MemoryLayerError as error:
            log.warning(
                "the vector index is behind the database until reconcile repairs it "
                "(%d rows to write, %d to delete): %s",
                len(self._upserts),
                len(self._deletes),
                error,
            )
