"""One model call for the texts of many concurrent callers, replies' texts first.

One model call is in flight; texts that arrive meanwhile go together in the next (per-text
cost halves in batches: docs/benchmarks.md, "Load"). Replies' texts go before the
background's, whose calls take fewer texts. A bounded LRU keyed by a digest of what the model
is given keeps recent vectors (they depend on the model only, never on anyone's facts).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from memory.embedding.base import Embedder, PromptedEmbedder, Vectors
from memory.embedding.prompts import Prompts, TextKind


@dataclass
class _Request:
    texts: list[str]
    kind: TextKind
    future: asyncio.Future[Vectors] = field(repr=False)


class _Lane:
    """An :class:`Embedder` view of the batcher with one priority."""

    def __init__(self, batcher: EmbeddingBatcher, urgent: bool) -> None:
        self._batcher = batcher
        self._urgent = urgent

    @property
    def model_name(self) -> str:
        return self._batcher.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        return await self._batcher.embed(texts, kind, urgent=self._urgent)

    async def aclose(self) -> None:
        """The batcher belongs to whoever built it; a lane closes nothing."""


class EmbeddingBatcher:
    """Batches concurrent ``embed`` calls into one call of ``inner`` (the caller's)."""

    def __init__(
        self,
        inner: Embedder,
        *,
        max_batch: int = 64,
        max_background_batch: int = 8,
        cache_size: int = 2048,
        max_calls: int = 1,
    ) -> None:
        if max_batch < 1 or max_background_batch < 1 or cache_size < 0 or max_calls < 1:
            raise ValueError(
                "the batch sizes and max_calls must be at least 1 and cache_size at least 0"
            )
        self._inner = inner
        # Kinds with the same prompt give the model the same text: one vector, one cache entry
        # (all-MiniLM-L6-v2 has none, so recall's query is the write path's document).
        self._prompts: Prompts | None = (
            inner.prompts if isinstance(inner, PromptedEmbedder) else None
        )
        self._max_calls = max_calls
        # The model calls in flight, each with whether it serves replies.
        self._calls: dict[asyncio.Task[None], bool] = {}
        self._max_batch = max_batch
        self._max_background_batch = min(max_background_batch, max_batch)
        self._cache_size = cache_size
        self._cache: OrderedDict[bytes, Vectors] = OrderedDict()
        self._urgent: deque[_Request] = deque()
        self._background: deque[_Request] = deque()
        self._waiting = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self.replies: Embedder = _Lane(self, urgent=True)
        self.background: Embedder = _Lane(self, urgent=False)

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    async def embed(
        self, texts: Sequence[str], kind: TextKind = "document", *, urgent: bool
    ) -> Vectors:
        if not texts:
            return await self._inner.embed([], kind)
        found = {text: cached for text in texts if (cached := self._cached(text, kind)) is not None}
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            computed = await self._queued(missing, kind, urgent=urgent)
            for text, vector in zip(missing, computed, strict=True):
                found[text] = vector
                self._remember(text, kind, vector)
        return np.vstack([found[text] for text in texts]).astype(np.float32)

    async def _queued(self, texts: list[str], kind: TextKind, *, urgent: bool) -> Vectors:
        future: asyncio.Future[Vectors] = asyncio.get_running_loop().create_future()
        (self._urgent if urgent else self._background).append(_Request(texts, kind, future))
        self._waiting.set()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name="embedding batcher")
        return await future

    async def _run(self) -> None:
        while True:
            await self._waiting.wait()
            self._waiting.clear()
            while len(self._calls) < self._max_calls:
                batch, urgent = self._next_batch()
                if not batch:
                    break
                self._start(batch, urgent)

    def _start(self, batch: list[_Request], urgent: bool) -> None:
        call = asyncio.create_task(self._call(batch))
        self._calls[call] = urgent

        def finished(_: asyncio.Task[None]) -> None:
            del self._calls[call]
            # Stopped (aclose) in the middle of a call: nobody may wait for ever.
            for request in batch:
                if not request.future.done():
                    request.future.cancel()
            self._waiting.set()

        call.add_done_callback(finished)

    def _next_batch(self) -> tuple[list[_Request], bool]:
        """Waiting reply requests, shared evenly between the free calls, else background
        ones (one such call at a time); a call takes one kind of text."""
        if self._urgent:
            free = self._max_calls - len(self._calls)
            waiting = sum(len(request.texts) for request in self._urgent)
            return self._take(self._urgent, min(self._max_batch, -(-waiting // free))), True
        if not all(self._calls.values()):
            return [], False
        return self._take(self._background, self._max_background_batch), False

    @staticmethod
    def _take(lane: deque[_Request], limit: int) -> list[_Request]:
        batch: list[_Request] = []
        size = 0
        while lane and (
            not batch or (size + len(lane[0].texts) <= limit and lane[0].kind == batch[0].kind)
        ):
            request = lane.popleft()
            if request.future.done():  # its caller was cancelled
                continue
            batch.append(request)
            size += len(request.texts)
        return batch

    async def _call(self, batch: list[_Request]) -> None:
        texts = [text for request in batch for text in request.texts]
        try:
            vectors = await self._inner.embed(texts, batch[0].kind)
        except Exception as error:
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(error)
            return
        start = 0
        for request in batch:
            end = start + len(request.texts)
            if not request.future.done():
                request.future.set_result(vectors[start:end])
            start = end

    def _key(self, text: str, kind: TextKind) -> bytes:
        """The digest of what the model is given (unsure of its prompts, of kind and text): a
        digest, so the cache keeps no words."""
        given = f"{kind}\0{text}" if self._prompts is None else self._prompts.of(kind) + text
        return hashlib.blake2b(given.encode(), digest_size=16).digest()

    def _cached(self, text: str, kind: TextKind) -> Vectors | None:
        key = self._key(text, kind)
        vector = self._cache.get(key)
        if vector is not None:
            self._cache.move_to_end(key)
        return vector

    def _remember(self, text: str, kind: TextKind, vector: Vectors) -> None:
        if self._cache_size == 0:
            return
        key = self._key(text, kind)
        # A copy: a row of the batch's array would keep the whole batch alive.
        self._cache[key] = vector.copy()
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    async def aclose(self) -> None:
        """Stop the batcher; calls still waiting fail with CancelledError."""
        if self._runner is not None:
            self._runner.cancel()
            for call in list(self._calls):
                call.cancel()
            await asyncio.gather(self._runner, *self._calls, return_exceptions=True)
            self._runner = None
        for lane in (self._urgent, self._background):
            while lane:
                lane.popleft().future.cancel()
