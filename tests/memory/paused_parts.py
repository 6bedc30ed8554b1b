"""Real parts that pause at one call until the test lets them go: test doubles for a slow
embedding model or a slow index write, to force one order of two concurrent tasks."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memory.embedding import FastEmbedEmbedder, TextKind, Vectors
from memory.index import IndexedFact, ScoredFactId
from memory.indexing import Reconcilable
from memory.scope import Scope


class PausedEmbedder:
    """The real model, whose first call waits until the test lets it go (test double for a
    slow embedding while reconcile runs)."""

    def __init__(self, inner: FastEmbedEmbedder) -> None:
        self.inner = inner
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        self.entered.set()
        await self.gate.wait()
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


class PausedIndex:
    """The real index (LanceDB, or pgvector for reconcile's own writes), whose first upsert
    waits until the test lets it go, and which records when an erase reaches it (test double
    for a slow index write)."""

    def __init__(self, inner: Reconcilable) -> None:
        self.inner = inner
        self.upsert_entered = asyncio.Event()
        self.gate = asyncio.Event()
        self.erase_entered = asyncio.Event()

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        self.upsert_entered.set()
        await self.gate.wait()
        await self.inner.upsert(facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        await self.inner.delete(fact_ids)

    async def erase(self, fact_ids: Sequence[int]) -> None:
        self.erase_entered.set()
        await self.inner.erase(fact_ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        return await self.inner.search(
            scope, vector, model=model, limit=limit, min_similarity=min_similarity
        )

    async def indexed_models(self) -> dict[int, str]:
        return await self.inner.indexed_models()

    async def optimize(self) -> None:
        await self.inner.optimize()

    async def aclose(self) -> None:
        await self.inner.aclose()
