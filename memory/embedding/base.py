"""The embedder port, and cosine similarity stated once for the whole product.

Every embedder returns L2-normalised float32 rows, so that cosine similarity is a dot product.
The vector index is told ``distance_type("cosine")`` as well; a test pins both to numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory.embedding.prompts import Prompts, TextKind

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors."""

    @property
    def model_name(self) -> str: ...

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        """One L2-normalised row per text, embedded with the model's prompt for ``kind``."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class PromptedEmbedder(Embedder, Protocol):
    """An embedder that says what it puts before each kind of text."""

    @property
    def prompts(self) -> Prompts: ...


def normalise(vectors: npt.ArrayLike) -> Vectors:
    """Scale each row to unit length (zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array[np.newaxis, :]
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Vectors = (array / norms).astype(np.float32)
    return normalised


def cosine_similarity(first: npt.ArrayLike, second: npt.ArrayLike) -> float:
    """Cosine similarity of two vectors, whether or not they are normalised."""
    a = np.asarray(first, dtype=np.float64).ravel()
    b = np.asarray(second, dtype=np.float64).ravel()
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 0.0 if denominator == 0 else float(a @ b) / denominator
