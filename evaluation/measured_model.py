"""A language model wrapper that counts calls and times them, per call kind."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.llm import AnswerCut, CallKind, ChatMessage, LanguageModel


@dataclass
class CallLog:
    seconds: dict[CallKind, list[float]] = field(default_factory=lambda: defaultdict(list))
    cut: dict[CallKind, int] = field(default_factory=lambda: defaultdict(int))

    @property
    def calls(self) -> int:
        return sum(len(durations) for durations in self.seconds.values())


class MeasuredModel:
    """Implements :class:`memory.llm.LanguageModel` around another one."""

    def __init__(self, inner: LanguageModel) -> None:
        self.inner = inner
        self.log = CallLog()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        started = time.perf_counter()
        try:
            return await self.inner.complete(
                messages, kind=kind, json_schema=json_schema, temperature=temperature
            )
        except AnswerCut:
            self.log.cut[kind] += 1
            raise
        finally:
            self.log.seconds[kind].append(time.perf_counter() - started)

    async def aclose(self) -> None:
        await self.inner.aclose()
