"""The reranker port: a cross-encoder that scores (query, passage) pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Reranker(Protocol):
    async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in their order (higher is more relevant)."""
        ...

    async def aclose(self) -> None: ...
