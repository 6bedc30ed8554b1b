"""Pair proposal: similar active facts inside one scope, found with the vector index
(changed facts times k, never n squared).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.records import Fact, FactStatus
from memory.scope import Scope, ScopeMode
from memory.store import Store

EMBED_CHUNK = 256


@dataclass(frozen=True, slots=True)
class CandidatePair:
    """Two active facts of one scope, the older first."""

    older: Fact
    newer: Fact
    similarity: float

    @property
    def ids(self) -> frozenset[int]:
        return frozenset((self.older.id, self.newer.id))


def consolidation_scope(fact: Fact) -> Scope:
    """The origin scope of a fact: its owner and the one room it was told in."""
    return Scope(fact.owner, fact.room, ScopeMode.USER_ROOM)


def chronological(first: Fact, second: Fact) -> tuple[Fact, Fact]:
    """(older, newer) by when the fact became true, then when it was stored, then id."""

    def key(fact: Fact) -> tuple[float, float, int]:
        valid_from = fact.valid_from or fact.created_at
        return (valid_from.timestamp(), fact.created_at.timestamp(), fact.id)

    return (first, second) if key(first) <= key(second) else (second, first)


async def nearest_ids(
    scope: Scope,
    changed: Sequence[Fact],
    index: VectorIndex,
    embedder: Embedder,
    *,
    threshold: float,
    neighbours: int,
) -> dict[tuple[int, int], float]:
    """Unordered id pairs (smaller id first) of similar facts, with their cosine."""
    found: dict[tuple[int, int], float] = {}
    # In chunks: a first run over a big scope must not embed everything in one call.
    for start in range(0, len(changed), EMBED_CHUNK):
        chunk = changed[start : start + EMBED_CHUNK]
        vectors = await embedder.embed([fact.text for fact in chunk], "document")
        for fact, vector in zip(chunk, vectors, strict=True):
            # One extra result, because the fact usually finds itself first.
            hits = await index.search(
                scope,
                vector,
                model=embedder.model_name,
                limit=neighbours + 1,
                min_similarity=threshold,
            )
            for hit in hits:
                if hit.fact_id != fact.id:
                    key = (min(fact.id, hit.fact_id), max(fact.id, hit.fact_id))
                    found[key] = max(found.get(key, -1.0), hit.similarity)
    return found


async def propose_pairs(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    scope: Scope,
    changed: Sequence[Fact],
    *,
    threshold: float,
    neighbours: int,
) -> list[CandidatePair]:
    """Pairs of active facts of ``scope`` similar enough to ask about, most similar first."""
    found = await nearest_ids(
        scope, changed, index, embedder, threshold=threshold, neighbours=neighbours
    )
    wanted = sorted({fact_id for key in found for fact_id in key})
    # Read through the scope: an id the index returned from elsewhere cannot appear here.
    read = await store.read(lambda transaction: transaction.facts.get_many(scope, wanted))
    facts = {fact.id: fact for fact in read}
    pairs = []
    for (first_id, second_id), similarity in found.items():
        first, second = facts.get(first_id), facts.get(second_id)
        if first is None or second is None or not _same_scope_active(scope, first, second):
            continue
        older, newer = chronological(first, second)
        pairs.append(CandidatePair(older, newer, similarity))
    pairs.sort(key=lambda pair: pair.similarity, reverse=True)
    return pairs


def _same_scope_active(scope: Scope, first: Fact, second: Fact) -> bool:
    return all(
        fact.owner == scope.owner and fact.room == scope.room and fact.status is FactStatus.ACTIVE
        for fact in (first, second)
    )
