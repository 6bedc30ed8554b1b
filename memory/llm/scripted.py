"""A scripted language model: the test double for an LLM's judgement.

It returns the given steps in order (answers, mistakes a real model makes, errors to raise,
or callables of the messages) and records every call. A text step answering a call that
offered tools is read for calls written as text, as the real backends read it; ``stream``
hands text on in small pieces, and a :class:`BrokenStream` breaks off midway.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.llm.base import (
    AnswerCut,
    AssistantTurn,
    CallKind,
    ChatMessage,
    TextSink,
    ToolsNotSupported,
    ToolSpec,
)
from memory.llm.text_tool_calls import turn_of

# The size of the pieces ``stream`` hands on: a few characters, as a token is.
PIECE_CHARS = 4


@dataclass(frozen=True, slots=True)
class BrokenStream:
    """A streamed answer that breaks off: ``text`` is handed on, then ``error`` raised."""

    text: str
    error: BaseException


Answer = str | AssistantTurn
Step = (
    Answer | BaseException | BrokenStream | Callable[[Sequence[ChatMessage]], Answer | BrokenStream]
)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    messages: tuple[ChatMessage, ...]
    json_schema: Mapping[str, Any] | None
    tools: tuple[ToolSpec, ...] = ()
    kind: CallKind = CallKind.REPLY

    @property
    def prompt_text(self) -> str:
        return "\n".join(message.content for message in self.messages)

    @property
    def system_text(self) -> str:
        return "\n".join(m.content for m in self.messages if m.role == "system")


@dataclass
class ScriptedLanguageModel:
    steps: list[Step] = field(default_factory=list)
    fallback: Step | None = None
    name: str = "scripted"
    supports_tools: bool = True
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
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        self.calls.append(RecordedCall(tuple(messages), json_schema, kind=kind))
        answer = self._answer(messages)
        if isinstance(answer, str):
            return answer
        if answer.tool_calls:
            raise AssertionError(
                f"call {len(self.calls)} offered no tools, but was scripted a call"
            )
        return answer.text

    async def complete_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        temperature: float | None = None,
    ) -> AssistantTurn:
        self.calls.append(RecordedCall(tuple(messages), None, tuple(tools)))
        if not self.supports_tools:
            raise ToolsNotSupported(f"{self.name} does not support tools")
        answer = self._answer(messages)
        return answer if isinstance(answer, AssistantTurn) else turn_of(answer, (), tools)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        on_text: TextSink,
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
    ) -> AssistantTurn:
        self.calls.append(RecordedCall(tuple(messages), None, tuple(tools)))
        if tools and not self.supports_tools:
            raise ToolsNotSupported(f"{self.name} does not support tools")
        step = self._step()
        answer = step if isinstance(step, AnswerCut) else self._computed(step, messages)
        if isinstance(answer, BrokenStream | AnswerCut):
            # What was written before the break (or the budget) was streamed all the same.
            await hand_on(answer.text, on_text)
            raise answer if isinstance(answer, AnswerCut) else answer.error
        await hand_on(answer.text if isinstance(answer, AssistantTurn) else answer, on_text)
        return answer if isinstance(answer, AssistantTurn) else turn_of(answer, (), tools)

    def _answer(self, messages: Sequence[ChatMessage]) -> Answer:
        answer = self._computed(self._step(), messages)
        if isinstance(answer, BrokenStream):
            raise AssertionError(f"call {len(self.calls)} does not stream, but was scripted one")
        return answer

    def _step(self) -> Step:
        if self.steps:
            return self.steps.pop(0)
        if self.fallback is not None:
            return self.fallback
        raise AssertionError(f"scripted LLM has no answer left for call {len(self.calls)}")

    @staticmethod
    def _computed(step: Step, messages: Sequence[ChatMessage]) -> Answer | BrokenStream:
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            return step(messages)
        return step

    async def aclose(self) -> None:
        return None


async def hand_on(text: str, on_text: TextSink) -> None:
    """``text`` to ``on_text`` in pieces, letting other tasks run between them."""
    for start in range(0, len(text), PIECE_CHARS):
        await on_text(text[start : start + PIECE_CHARS])
        await asyncio.sleep(0)
