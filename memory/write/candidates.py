"""Stage 2: the active facts of the same scope that a new fact resembles (cosine >= threshold).

The index searches inside the scope; the facts are read back from SQLite with the same scope,
active only, as the index can lag behind.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.embedding.base import Vectors
from memory.index.base import VectorIndex
from memory.records import Fact, FactStatus
from memory.scope import Scope
from memory.store import Store

# `mnemo calibrate` for all-MiniLM-L6-v2 (docs/benchmarks.md); memory.candidate_threshold.
CALIBRATED_CANDIDATE_THRESHOLD = 0.30
# The thresholds `mnemo calibrate` recommended for the models Mnemo knows (each spreads
# similarities its own way): the lowest pair that must be a candidate, less 0.05 for recall,
# on the shipped pairs with facts embedded as documents; for EmbeddingGemma the lower of its
# fp32 and int8 copies.
_KNOWN_THRESHOLDS = {
    "all-minilm-l6-v2": CALIBRATED_CANDIDATE_THRESHOLD,
    "embeddinggemma": 0.48,
}


def calibrated_threshold(model: str) -> float | None:
    """The measured threshold of ``model`` (by name, fastembed's or Ollama's), else None."""
    name = model.lower()
    for known, threshold in _KNOWN_THRESHOLDS.items():
        if known in name:
            return threshold
    return None


@dataclass(frozen=True, slots=True)
class Candidate:
    fact: Fact
    similarity: float


async def find_candidates(
    store: Store,
    index: VectorIndex,
    scope: Scope,
    vectors: Vectors,
    *,
    model: str,
    threshold: float,
    limit: int,
) -> list[list[Candidate]]:
    """For each row of ``vectors`` (embedded by ``model``), its candidates, most similar
    first."""
    scored = [
        await index.search(scope, row, model=model, limit=limit, min_similarity=threshold)
        for row in vectors
    ]
    wanted = {item.fact_id for items in scored for item in items}
    found = await store.read(lambda transaction: transaction.facts.get_many(scope, list(wanted)))
    facts = {fact.id: fact for fact in found}
    return [
        [
            Candidate(facts[item.fact_id], item.similarity)
            for item in items
            if item.fact_id in facts
            and facts[item.fact_id].status is FactStatus.ACTIVE
            and item.similarity >= threshold
        ]
        for items in scored
    ]
