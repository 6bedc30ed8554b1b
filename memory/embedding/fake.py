"""A deterministic embedder for tests that do not care about meaning: each word hashed into
a bucket, so texts sharing words are similar."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Vectors, normalise
from memory.embedding.prompts import NO_PROMPTS, Prompts, TextKind


class HashingEmbedder:
    """``calls`` records the texts of each call as the model would see them (prompted)."""

    def __init__(
        self, dimension: int = 64, model_name: str = "test/hashing", prompts: Prompts = NO_PROMPTS
    ) -> None:
        self.dimension = dimension
        self._model_name = model_name
        self._prompts = prompts
        self.calls: list[list[str]] = []

    @property
    def prompts(self) -> Prompts:
        return self._prompts

    @property
    def model_name(self) -> str:
        return self._model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        texts = self._prompts.apply(texts, kind)
        self.calls.append(texts)
        rows = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
                rows[row, int.from_bytes(digest, "little") % self.dimension] += 1.0
        return normalise(rows)

    async def aclose(self) -> None:
        return None
