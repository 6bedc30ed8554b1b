"""The write path's model calls wait their turn behind replies.

A local model server answers few requests at once: a background extraction queued just
before a reply's request makes that reply wait for it. Each background call therefore goes
through :meth:`memory.priority.ReplyPriority.background`: while replies are in progress it
waits for them (bounded, see there), so what is queued at the server is the reply.

And at most ``max_calls`` background calls are at the server at once, however many people's
writes the queue worker plans together: a reply that starts meanwhile queues behind at most
that many (the worker processes more people at once than that for bigger group commits).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from memory.llm import CallKind, ChatMessage, LanguageModel
from memory.priority import ReplyPriority


class BackgroundModel:
    """A :class:`LanguageModel` whose calls give way to replies; the model is not owned."""

    def __init__(
        self, model: LanguageModel, priority: ReplyPriority, *, max_calls: int = 4
    ) -> None:
        if max_calls < 1:
            raise ValueError("the background model needs at least one call at a time")
        self._model = model
        self._priority = priority
        self._calls = asyncio.Semaphore(max_calls)

    @property
    def model_name(self) -> str:
        return self._model.model_name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        # A free call slot first, then the reply gate: a call let through by the gate goes
        # to the server at once, not after replies started meanwhile.
        async with self._calls, self._priority.background():
            return await self._model.complete(
                messages, kind=kind, json_schema=json_schema, temperature=temperature
            )

    async def aclose(self) -> None:
        """The model belongs to whoever built it."""
