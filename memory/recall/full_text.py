"""The optional full-text port of an index, used by hybrid retrieval.

An index that can search its facts' text implements this beside the vector search; the
recaller uses it only when ``RecallSettings.hybrid`` is on, and the scope filter belongs in
the query exactly as for vectors.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from memory.index.base import ScoredFactId
from memory.scope import Scope


@runtime_checkable
class FullTextIndex(Protocol):
    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        """Facts visible in ``scope`` whose text matches ``query``, best first.

        The ``similarity`` field holds the engine's relevance score (BM25-like, not a cosine).
        """
        ...
