"""Cosine similarity of every labelled pair under one embedding model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.calibration.pairs import LabelledPair
from memory.embedding.base import Embedder, cosine_similarity


@dataclass(frozen=True, slots=True)
class ScoredPair:
    pair: LabelledPair
    similarity: float


async def score_pairs(pairs: Sequence[LabelledPair], embedder: Embedder) -> list[ScoredPair]:
    """Embed all sentences in one batch and score each pair by cosine."""
    sentences = list(dict.fromkeys(s for pair in pairs for s in (pair.first, pair.second)))
    vectors = dict(zip(sentences, await embedder.embed(sentences, "document"), strict=True))
    return [
        ScoredPair(pair, cosine_similarity(vectors[pair.first], vectors[pair.second]))
        for pair in pairs
    ]
