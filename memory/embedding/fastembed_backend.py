"""In-process ONNX embeddings with fastembed; the default backend."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedding.base import Vectors, normalise
from memory.embedding.prompts import Prompts, TextKind, default_prompts
from memory.errors import EmbeddingError, EmbeddingModelUnavailable

log = logging.getLogger(__name__)


def _supported_models() -> set[str]:
    from fastembed import TextEmbedding

    return {description["model"] for description in TextEmbedding.list_supported_models()}


def _register_local_model(model: str, dimension: int, pooling: str) -> None:
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    TextEmbedding.add_custom_model(
        model=model,
        pooling=PoolingType[pooling.upper()],
        normalization=True,
        sources=ModelSource(hf="local/none"),
        dim=dimension,
        model_file="model.onnx",
    )


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding``, loaded on first use in a worker thread; a model
    fastembed does not know needs ``dimension`` (and ``pooling``)."""

    def __init__(
        self,
        model: str,
        *,
        model_path: Path | None = None,
        cache_dir: Path | None = None,
        dimension: int | None = None,
        pooling: str = "mean",
        threads: int | None = None,
        batch_size: int = 64,
        prompts: Prompts | None = None,
    ) -> None:
        self._model = model
        self._prompts = default_prompts(model) if prompts is None else prompts
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._dimension = dimension
        self._pooling = pooling
        self._threads = threads
        self._batch_size = batch_size
        self._engine: Any = None
        self._load_lock = asyncio.Lock()

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def prompts(self) -> Prompts:
        return self._prompts

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        engine = await self._loaded()
        prompted = self._prompts.apply(texts, kind)
        try:
            rows = await asyncio.to_thread(
                lambda: list(engine.embed(prompted, batch_size=self._batch_size))
            )
        except Exception as error:
            raise EmbeddingError(f"embedding with {self._model} failed: {error}") from error
        return normalise(np.vstack(rows))

    async def load(self) -> None:
        """Load the model now (otherwise the first ``embed`` does)."""
        await self._loaded()

    async def _loaded(self) -> Any:
        async with self._load_lock:
            if self._engine is None:
                self._engine = await asyncio.to_thread(self._create)
        return self._engine

    def _create(self) -> Any:
        from fastembed import TextEmbedding

        if self._model_path is not None and not self._model_path.is_dir():
            raise EmbeddingModelUnavailable(
                f"embedding.model_path {self._model_path} is not a directory"
            )
        if self._model not in _supported_models():
            if self._model_path is None or self._dimension is None:
                raise EmbeddingModelUnavailable(
                    f"fastembed does not know the model {self._model!r}: give "
                    "embedding.model_path (an ONNX directory) and embedding.dimension"
                )
            _register_local_model(self._model, self._dimension, self._pooling)
        try:
            return TextEmbedding(
                self._model,
                cache_dir=str(self._cache_dir) if self._cache_dir else None,
                threads=self._threads,
                specific_model_path=str(self._model_path) if self._model_path else None,
            )
        except Exception as error:
            where = self._model_path or "fastembed's download"
            raise EmbeddingModelUnavailable(
                f"could not load embedding model {self._model!r} from {where}: "
                f"{str(error).rstrip('.')}. "
                "Without internet access set embedding.model_path to a local ONNX directory."
            ) from error

    async def aclose(self) -> None:
        self._engine = None
