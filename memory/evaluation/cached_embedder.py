"""An embedder that serves texts embedded ahead of time in batches (for evaluations: several
times faster than one by one, the same vectors)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Embedder, Vectors
from memory.embedding.prompts import TextKind


class PrecomputedEmbedder:
    def __init__(self, inner: Embedder, *, batch_size: int = 256) -> None:
        self._inner = inner
        self._batch_size = batch_size
        self._vectors: dict[tuple[TextKind, str], Vectors] = {}

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    async def prime(self, texts: Sequence[str], kind: TextKind) -> None:
        """Embed every text of ``kind`` not cached yet, in batches."""
        missing = list(dict.fromkeys(t for t in texts if (kind, t) not in self._vectors))
        for start in range(0, len(missing), self._batch_size):
            batch = missing[start : start + self._batch_size]
            for text, vector in zip(batch, await self._inner.embed(batch, kind), strict=True):
                self._vectors[kind, text] = vector

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        await self.prime(texts, kind)
        if not texts:
            return await self._inner.embed(texts, kind)
        return np.vstack([self._vectors[kind, text] for text in texts])

    async def aclose(self) -> None:
        # The inner embedder belongs to whoever passed it in.
        self._vectors.clear()
