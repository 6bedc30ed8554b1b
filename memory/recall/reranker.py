"""The reranker port: a cross-encoder that scores (query, passage) pairs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Reranker(Protocol):
    async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
        """One relevance score per passage, in the passages' order (higher is more relevant).

        Raises :class:`~memory.recall.errors.RerankerUnavailable` if the model cannot be
        loaded and :class:`~memory.recall.errors.RerankerError` if scoring fails.
        """
        ...

    async def aclose(self) -> None: ...
