"""An in-process vector index over numpy (test double for the LanceDB index)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncSession

from memory.embedding.base import cosine_similarity
from memory.index.after_commit import AfterCommitWrites
from memory.index.base import IndexedFact, ScoredFactId
from memory.scope import Scope


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


class InMemoryVectorIndex:
    def __init__(self) -> None:
        self.rows: dict[int, IndexedFact] = {}

    def writes_in(self, session: AsyncSession) -> AfterCommitWrites:
        """Written after the store's commit (this index is not in the database)."""
        return AfterCommitWrites(self)

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        for fact in facts:
            self.rows[fact.fact_id] = fact

    async def delete(self, fact_ids: Sequence[int]) -> None:
        for fact_id in fact_ids:
            self.rows.pop(fact_id, None)

    async def erase(self, fact_ids: Sequence[int]) -> None:
        """Nothing outlives a delete here: erasing is deleting."""
        await self.delete(fact_ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        scored = [
            ScoredFactId(fact.fact_id, cosine_similarity(vector, fact.vector))
            for fact in self.rows.values()
            if scope.sees(fact.owner, fact.room)
        ]
        if min_similarity is not None:
            scored = [item for item in scored if item.similarity >= min_similarity]
        scored.sort(key=lambda item: item.similarity, reverse=True)
        return scored[:limit]

    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        """Shared lowercase words as the score: a stand-in for LanceDB's BM25."""
        terms = _words(query)
        scored = [
            ScoredFactId(fact.fact_id, float(len(terms & _words(fact.text))))
            for fact in self.rows.values()
            if scope.sees(fact.owner, fact.room)
        ]
        matching = [item for item in scored if item.similarity > 0]
        matching.sort(key=lambda item: item.similarity, reverse=True)
        return matching[:limit]

    async def indexed_models(self) -> dict[int, str]:
        return {fact_id: fact.model for fact_id, fact in self.rows.items()}

    async def optimize(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
