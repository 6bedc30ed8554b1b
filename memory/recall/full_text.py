"""The optional full-text port of an index, used by hybrid retrieval."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.index.base import ScoredFactId
from memory.scope import Scope


@runtime_checkable
class FullTextIndex(Protocol):
    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        """Facts visible in ``scope`` whose text matches ``query``, best first (by score)."""
        ...
