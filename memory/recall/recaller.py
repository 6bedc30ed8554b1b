"""The read path: which of a person's facts go into the prompt.

``passive`` (every reply: the nearest facts), ``lookup`` (questions: a wide pool reranked),
``overview`` (the newest facts) and optional ``hybrid`` fusion. The scope is in both the
index search and the read of the facts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from memory.embedding.base import Embedder, Vectors
from memory.errors import VectorIndexError
from memory.index.base import VectorIndex
from memory.recall.classifier import wants_lookup, wants_overview
from memory.recall.errors import RerankerError, RerankerUnavailable
from memory.recall.full_text import FullTextIndex
from memory.recall.fusion import reciprocal_rank_fusion
from memory.recall.reranker import Reranker
from memory.recall.results import RecalledFact, RecallSettings
from memory.records import FactStatus
from memory.scope import Scope
from memory.store import Store, StoreTransaction

log = logging.getLogger(__name__)

Ranking = list[tuple[int, float]]
T = TypeVar("T")
# Reads something more in the recall's own read transaction (a sync job, as the store's).
ReadAlong = Callable[[StoreTransaction], T]


def nothing(transaction: StoreTransaction) -> None:
    """Nothing more to read."""


class Recaller:
    def __init__(
        self,
        store: Store,
        index: VectorIndex,
        embedder: Embedder,
        settings: RecallSettings,
        *,
        reranker: Reranker | None = None,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self.settings = settings
        self._reranker = reranker
        # A reranker that cannot load is logged once and then left alone (cosine order).
        self._reranker_unavailable = False
        self._full_text_warned = False

    @property
    def reranking(self) -> bool:
        """Whether lookups are currently reranked (False without one or after a failed load)."""
        return self._reranker is not None and not self._reranker_unavailable

    async def passive(self, scope: Scope, text: str) -> list[RecalledFact]:
        """The ``top_k`` facts of ``scope`` nearest to ``text``; no reranker, no cutoff."""
        recalled, _ = await self._recall(scope, text, lookup=False, also=nothing)
        return recalled

    async def lookup(self, scope: Scope, query: str) -> list[RecalledFact]:
        """A wide pool of ``scope``'s facts, reranked, and its ``top_k`` best (without a
        reranker, the ``top_k`` nearest)."""
        recalled, _ = await self._recall(scope, query, lookup=True, also=nothing)
        return recalled

    def start_embedding(self, text: str) -> asyncio.Task[Vectors] | None:
        """Begin embedding ``text`` for :meth:`for_message_with` now, beside the message's
        intake, so that a reply waits for the longer of the two, not for both; None when
        recall will not embed it."""
        if wants_overview(text) or not text.strip():
            return None
        return asyncio.create_task(self._embedder.embed([text], "query"))

    async def for_message_with(
        self,
        scope: Scope,
        text: str,
        also: ReadAlong[T],
        *,
        embedding: Awaitable[Vectors] | None = None,
    ) -> tuple[list[RecalledFact], T]:
        """The overview, a lookup for questions, passive recall for everything else, and
        ``also`` read in the same read transaction; ``embedding`` is :meth:`start_embedding`'s."""
        if wants_overview(text):

            def overview(transaction: StoreTransaction) -> tuple[list[RecalledFact], T]:
                return self._overview_in(transaction, scope), also(transaction)

            return await self._store.read(overview)
        return await self._recall(
            scope, text, lookup=wants_lookup(text), also=also, embedding=embedding
        )

    async def _recall(
        self,
        scope: Scope,
        text: str,
        *,
        lookup: bool,
        also: ReadAlong[T],
        embedding: Awaitable[Vectors] | None = None,
    ) -> tuple[list[RecalledFact], T]:
        ranking: Ranking = []
        if text.strip():
            if embedding is None:
                embedding = self._embedder.embed([text], "query")
            vector = (await embedding)[0]
            cutoff = self.settings.lookup_min_similarity if lookup else None
            # A wide pool only for what reorders it: the reranker, or the fusion of ranks.
            reordered = (lookup and self.reranking) or self.settings.hybrid
            pool = self.settings.lookup_pool if reordered else self.settings.top_k
            ranking = await self._ranking(scope, text, vector, pool=pool, min_similarity=cutoff)

        def load(transaction: StoreTransaction) -> tuple[list[RecalledFact], T]:
            return self._load(transaction, scope, ranking), also(transaction)

        recalled, extra = await self._store.read(load)
        if lookup:
            recalled = await self._rerank(text, recalled)
        return recalled[: self.settings.top_k], extra

    def _overview_in(self, transaction: StoreTransaction, scope: Scope) -> list[RecalledFact]:
        """The newest ``overview_limit`` active facts of ``scope``, newest first (score 1)."""
        facts = transaction.facts.list_in_scope(
            scope, limit=self.settings.overview_limit, newest_first=True
        )
        return [RecalledFact(fact, 1.0) for fact in facts]

    async def _ranking(
        self,
        scope: Scope,
        text: str,
        vector: Vectors,
        *,
        pool: int,
        min_similarity: float | None,
    ) -> Ranking:
        dense = await self._index.search(
            scope,
            vector,
            model=self._embedder.model_name,
            limit=pool,
            min_similarity=min_similarity,
        )
        dense_ranking = [(hit.fact_id, hit.similarity) for hit in dense]
        if not self.settings.hybrid:
            return dense_ranking
        full_text = await self._full_text(scope, text, pool)
        if full_text is None:
            return dense_ranking
        return reciprocal_rank_fusion(
            [[fact_id for fact_id, _ in dense_ranking], full_text], k=self.settings.fusion_k
        )

    async def _full_text(self, scope: Scope, text: str, pool: int) -> list[int] | None:
        """Full-text ranks, or None (dense only) if the index cannot search text."""
        if not isinstance(self._index, FullTextIndex):
            self._warn_full_text_once("the vector index has no full-text search")
            return None
        try:
            hits = await self._index.full_text_search(scope, text, limit=pool)
        except VectorIndexError as error:
            self._warn_full_text_once(str(error))
            return None
        return [hit.fact_id for hit in hits]

    def _warn_full_text_once(self, reason: str) -> None:
        if not self._full_text_warned:
            self._full_text_warned = True
            log.warning("hybrid recall uses vectors only: %s", reason)

    @staticmethod
    def _load(transaction: StoreTransaction, scope: Scope, ranking: Ranking) -> list[RecalledFact]:
        """The ranked ids as active facts of ``scope``, read with the scope in the SQL query."""
        if not ranking:
            return []
        facts = transaction.facts.get_many(scope, [fact_id for fact_id, _ in ranking])
        by_id = {fact.id: fact for fact in facts if fact.status is FactStatus.ACTIVE}
        return [
            RecalledFact(by_id[fact_id], score) for fact_id, score in ranking if fact_id in by_id
        ]

    async def _rerank(self, query: str, pool: Sequence[RecalledFact]) -> list[RecalledFact]:
        if not pool or not self.reranking:
            return list(pool)
        assert self._reranker is not None
        try:
            scores = await self._reranker.rank(query, [item.fact.text for item in pool])
        except RerankerUnavailable as error:
            self._reranker_unavailable = True
            log.warning("reranker unavailable, lookups use cosine order from now on: %s", error)
            return list(pool)
        except RerankerError as error:
            log.warning("reranking failed, this lookup uses cosine order: %s", error)
            return list(pool)
        rescored = [
            RecalledFact(item.fact, score) for item, score in zip(pool, scores, strict=True)
        ]
        return sorted(rescored, key=lambda item: item.score, reverse=True)
