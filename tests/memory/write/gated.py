"""A scripted model whose chosen calls hang until the test lets them go.

Test double for a language model that is slow or hangs at the worst moment (inside the
extraction of a message, say): the test decides when, and can see how many calls wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.llm import CallKind, ChatMessage, ScriptedLanguageModel
from memory.write.prompts import extraction

EXTRACTION_OPENING = extraction.SYSTEM_PROMPT.split("\n", 1)[0]
GUARD_SECONDS = 60.0


def is_extraction(messages: Sequence[ChatMessage]) -> bool:
    return messages[0].content.startswith(EXTRACTION_OPENING)


def never(messages: Sequence[ChatMessage]) -> bool:
    return False


@dataclass
class GatedLanguageModel(ScriptedLanguageModel):
    held: Callable[[Sequence[ChatMessage]], bool] = never
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    waiting: list[str] = field(default_factory=list)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        if self.held(messages):
            text = messages[-1].content
            self.waiting.append(text)
            try:
                await self.gate.wait()
            finally:
                self.waiting.remove(text)
        return await super().complete(
            messages, kind=kind, json_schema=json_schema, temperature=temperature
        )

    def open(self) -> None:
        self.gate.set()


async def until(condition: Callable[[], bool | Awaitable[bool]]) -> None:
    """Wait for ``condition``; the time limit only keeps a broken test from hanging."""

    async def poll() -> None:
        while True:
            result = condition()
            if result if isinstance(result, bool) else await result:
                return
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), GUARD_SECONDS)
