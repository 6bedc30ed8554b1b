"""The vector index port: the active facts' vectors, searched inside one scope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory.scope import Scope


@dataclass(frozen=True, slots=True)
class IndexedFact:
    """One row of the index: derived from an active fact in SQLite."""

    fact_id: int
    owner: str
    room: str
    text: str
    vector: npt.NDArray[np.float32]
    model: str


@dataclass(frozen=True, slots=True)
class StoredVector:
    """A fact's vector as an index holds it, and the model that made it."""

    model: str
    vector: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ScoredFactId:
    fact_id: int
    similarity: float


class IndexWrites(Protocol):
    """Rows to write for the facts a store transaction changed."""

    async def upsert(self, facts: Sequence[IndexedFact]) -> None: ...

    async def delete(self, fact_ids: Sequence[int]) -> None: ...

    async def erase(self, fact_ids: Sequence[int]) -> None:
        """Delete the rows and leave no trace of them, or of any row deleted before, in
        whatever the index stores (for ``forget``: gone for good when this returns)."""
        ...


class VectorIndex(IndexWrites, Protocol):
    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        """The nearest facts visible in ``scope`` whose rows ``model`` embedded, most similar
        first (cosine): a fact not yet re-embedded after a change of model is not found."""
        ...

    async def aclose(self) -> None: ...
