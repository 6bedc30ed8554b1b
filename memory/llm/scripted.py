"""A scripted language model (test double for an LLM's judgement).

It returns, in order, exactly the texts it was given, including the mistakes a real model
makes (wrong target, hallucinated id, broken JSON), or raises the errors it was given. A
callable step computes its answer from the messages. Every call is recorded for assertions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.llm.base import ChatMessage

Step = str | BaseException | Callable[[Sequence[ChatMessage]], str]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    messages: tuple[ChatMessage, ...]
    json_schema: Mapping[str, Any] | None

    @property
    def prompt_text(self) -> str:
        """All message contents joined, for "the prompt contains ..." assertions."""
        return "\n".join(message.content for message in self.messages)


@dataclass
class ScriptedLanguageModel:
    steps: list[Step] = field(default_factory=list)
    fallback: Step | None = None
    name: str = "scripted"
    calls: list[RecordedCall] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return self.name

    def add(self, *steps: Step) -> None:
        self.steps.extend(steps)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        self.calls.append(RecordedCall(tuple(messages), json_schema))
        if self.steps:
            step = self.steps.pop(0)
        elif self.fallback is not None:
            step = self.fallback
        else:
            raise AssertionError(f"scripted LLM has no answer left for call {len(self.calls)}")
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step(messages)
        return step

    async def aclose(self) -> None:
        return None
