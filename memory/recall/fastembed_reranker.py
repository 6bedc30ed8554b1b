"""The cross-encoder reranker on fastembed's ``TextCrossEncoder`` (ONNX, in-process).

Loaded on first use in a worker thread, a failed load remembered; with ``load_wait`` a call
waits at most so long and raises "still loading", so recall answers in cosine order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from memory.recall.errors import RerankerError, RerankerUnavailable

DEFAULT_RERANKER_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"


class CrossEncoderEngine(Protocol):
    """The part of fastembed's ``TextCrossEncoder`` we use."""

    def rerank(self, query: str, documents: list[str], batch_size: int = ...) -> Any: ...


class FastEmbedReranker:
    """``model``: a fastembed cross-encoder name; ``engine_factory`` replaces fastembed."""

    def __init__(
        self,
        model: str = DEFAULT_RERANKER_MODEL,
        *,
        model_path: Path | None = None,
        cache_dir: Path | None = None,
        local_files_only: bool = False,
        threads: int | None = None,
        batch_size: int = 64,
        load_wait: float | None = None,
        engine_factory: Callable[[], CrossEncoderEngine] | None = None,
    ) -> None:
        self._model = model
        self._model_path = model_path
        self._cache_dir = cache_dir
        self._local_files_only = local_files_only
        self._threads = threads
        self._batch_size = batch_size
        self._engine_factory = engine_factory or self._create
        self._load_wait = load_wait
        self._engine: CrossEncoderEngine | None = None
        self._load_error: RerankerUnavailable | None = None
        self._load_task: asyncio.Future[CrossEncoderEngine] | None = None

    @property
    def model_name(self) -> str:
        return self._model

    async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        engine = await self._loaded(wait_seconds=self._load_wait)
        try:
            scores = await asyncio.to_thread(
                lambda: list(engine.rerank(query, list(passages), batch_size=self._batch_size))
            )
        except Exception as error:
            raise RerankerError(f"reranking with {self._model} failed: {error}") from error
        if len(scores) != len(passages):
            raise RerankerError(
                f"reranker {self._model} returned {len(scores)} scores for {len(passages)}"
            )
        return [float(score) for score in scores]

    async def load(self) -> None:
        """Load the model now and wait for it, however long it takes (doctor, eval)."""
        await self._loaded(wait_seconds=None)

    async def _loaded(self, *, wait_seconds: float | None) -> CrossEncoderEngine:
        if self._load_error is not None:
            raise self._load_error
        if self._engine is not None:
            return self._engine
        if self._load_task is None:
            self._load_task = asyncio.ensure_future(asyncio.to_thread(self._engine_factory))
            self._load_task.add_done_callback(self._remember_failure)
        try:
            # shield: a call that stops waiting leaves the load running for the next one.
            engine = await asyncio.wait_for(asyncio.shield(self._load_task), timeout=wait_seconds)
        except TimeoutError as error:
            raise RerankerError(f"reranker {self._model} is still loading") from error
        except Exception as error:
            self._load_error = self._unavailable(error)
            raise self._load_error from error
        self._engine = engine
        return engine

    def _remember_failure(self, load: asyncio.Future[CrossEncoderEngine]) -> None:
        # A load may fail while no lookup waits for it (they stop waiting after load_wait).
        error = None if load.cancelled() else load.exception()
        if isinstance(error, Exception):
            self._load_error = self._unavailable(error)

    def _unavailable(self, error: Exception) -> RerankerUnavailable:
        where = self._model_path or "fastembed's download"
        return RerankerUnavailable(
            f"could not load reranker model {self._model!r} from {where}: "
            f"{str(error).rstrip('.')}. "
            "Without internet access set memory.reranker_model_path to a local ONNX directory."
        )

    def _create(self) -> CrossEncoderEngine:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        if self._model_path is not None and not self._model_path.is_dir():
            raise FileNotFoundError(f"{self._model_path} is not a directory")
        engine: CrossEncoderEngine = TextCrossEncoder(
            self._model,
            cache_dir=str(self._cache_dir) if self._cache_dir else None,
            threads=self._threads,
            specific_model_path=str(self._model_path) if self._model_path else None,
            local_files_only=self._local_files_only,
        )
        return engine

    async def aclose(self) -> None:
        # A load still running in its thread cannot be stopped; it is only abandoned.
        if self._load_task is not None and not self._load_task.done():
            self._load_task.cancel()
        self._load_task = None
        self._engine = None
