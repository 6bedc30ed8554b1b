"""What recall returns, and the knobs that shape it."""

from __future__ import annotations

from dataclasses import dataclass

from memory.records import Fact


@dataclass(frozen=True)
class RecalledFact:
    """A fact visible in the caller's scope, with the score that ranked it (comparable only
    within one result list)."""

    fact: Fact
    score: float


@dataclass(frozen=True)
class RecallSettings:
    """``top_k`` facts go into a prompt; lookup reranks a ``lookup_pool`` cut at
    ``lookup_min_similarity``; ``hybrid`` fuses full-text and vector ranks."""

    top_k: int = 6
    lookup_pool: int = 50
    lookup_min_similarity: float = 0.1
    hybrid: bool = False
    fusion_k: int = 60
    overview_limit: int = 30

    def __post_init__(self) -> None:
        if self.top_k < 1 or self.lookup_pool < 1 or self.overview_limit < 1:
            raise ValueError("top_k, lookup_pool and overview_limit must be at least 1")
        if not -1.0 <= self.lookup_min_similarity <= 1.0:
            raise ValueError("lookup_min_similarity must be a cosine in [-1, 1]")
