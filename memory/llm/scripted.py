"""A scripted language model (test double for an LLM's judgement).

It returns, in order, exactly the answers it was given, including the mistakes a real model
makes (wrong target, hallucinated id, broken JSON, a tool call with bad arguments), or raises
the errors it was given. A callable step computes its answer from the messages. A step is
text or an :class:`AssistantTurn` (text and tool calls, for calls that offer tools). With
``supports_tools=False`` it refuses tools as a model without tool support does. A text step
answering a call that offered tools goes through the same reading of calls written as text
as the real backends. Every call is recorded, with its kind and the tools it offered, for
assertions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory.llm.base import AssistantTurn, CallKind, ChatMessage, ToolsNotSupported, ToolSpec
from memory.llm.text_tool_calls import calls_in_text

Answer = str | AssistantTurn
Step = Answer | BaseException | Callable[[Sequence[ChatMessage]], Answer]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    messages: tuple[ChatMessage, ...]
    json_schema: Mapping[str, Any] | None
    tools: tuple[ToolSpec, ...] = ()
    kind: CallKind = CallKind.REPLY

    @property
    def prompt_text(self) -> str:
        """All message contents joined, for "the prompt contains ..." assertions."""
        return "\n".join(message.content for message in self.messages)


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
        if isinstance(answer, AssistantTurn):
            return answer
        written = calls_in_text(answer, [tool.name for tool in tools])
        return AssistantTurn(written.rest, written.calls)

    def _answer(self, messages: Sequence[ChatMessage]) -> Answer:
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
