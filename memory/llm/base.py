"""The language-model port: a chat completion (optionally to a JSON schema), one that may
call tools, and a streamed reply.

The port returns raw text and the calls as made: validating them is the caller's guard.
Every call names its :class:`CallKind`, whose token budget is sent, so a runaway answer ends
at the budget (:class:`AnswerCut`, with the text so far) instead of at the timeout.

Errors::

    LanguageModelError
     ├── LanguageModelUnavailable   server unreachable or timing out (retry later)
     ├── ModelNotFound              the model is not pulled / not served (operator must fix)
     ├── WrongProvider              the server speaks another API than llm.provider (fix config)
     ├── ToolsNotSupported          the model or server cannot take tools (use another way)
     ├── AnswerCut                  the answer reached its token budget (text so far kept)
     └── LanguageModelResponseError the server answered with an error
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from memory.errors import MemoryLayerError

Role = Literal["system", "user", "assistant", "tool"]
# Receives each piece of a streamed answer's text, in order.
TextSink = Callable[[str], Awaitable[None]]


class CallKind(StrEnum):
    """What a call is for: it picks the token budget and labels the call in measurements."""

    REPLY = "reply"
    EXTRACTION = "extraction"
    DECISION = "decision"
    SEARCH_DECISION = "search_decision"
    JUDGE = "judge"


@dataclass(frozen=True, slots=True)
class TokenBudgets:
    """The most tokens generated per call kind: room for many facts (about 30 tokens a
    fact, 15 a decision) or ten judged pairs; a reply of 1,024 tokens is some 700 words."""

    reply: int = 1024
    extraction: int = 512
    decision: int = 384
    search_decision: int = 192
    judge: int = 640

    def for_kind(self, kind: CallKind) -> int:
        budget: int = getattr(self, kind.value)
        return budget


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool offered to the model; ``parameters_schema`` is a JSON schema of an object."""

    name: str
    description: str
    parameters_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call the model made. ``id`` is the server's id for it, when the server gives one."""

    name: str
    arguments: dict[str, Any]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One message. An assistant message may carry the ``tool_calls`` it made; a ``tool``
    message carries, in ``tool_call``, the call whose result its content is."""

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call: ToolCall | None = None


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """The model's answer when tools were offered: text, tool calls, or both."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()

    def as_message(self) -> ChatMessage:
        return ChatMessage("assistant", self.text, tool_calls=self.tool_calls)


def tool_definition(tool: ToolSpec) -> dict[str, Any]:
    """The tool as OpenAI-compatible servers and Ollama alike take it (``tools``)."""
    function = {
        "name": tool.name,
        "description": tool.description,
        "parameters": dict(tool.parameters_schema),
    }
    return {"type": "function", "function": function}


def tool_result(call: ToolCall, content: str) -> ChatMessage:
    """The message that gives ``content`` back to the model as the result of ``call``."""
    return ChatMessage("tool", content, tool_call=call)


class LanguageModelError(MemoryLayerError):
    """The language model could not give an answer."""


class LanguageModelUnavailable(LanguageModelError):
    """The server could not be reached or did not answer in time."""


class ModelNotFound(LanguageModelError):
    """The server runs, but does not have the configured model."""


class ToolsNotSupported(LanguageModelError):
    """The model (or the server as started) refuses requests that offer tools."""


class LanguageModelResponseError(LanguageModelError):
    """The server answered with an error other than a missing model."""


class WrongProvider(LanguageModelError):
    """The server at ``llm.base_url`` answers, but not the API of the configured provider."""


class AnswerCut(LanguageModelError):
    """The model stopped at its token budget; ``text`` is what it wrote until then."""

    def __init__(self, kind: CallKind, budget: int, text: str) -> None:
        super().__init__(
            f"the {kind.value} answer reached its budget of {budget} tokens and was cut "
            f"(raise llm.max_tokens_{kind.value} if answers of this kind are often cut)"
        )
        self.kind = kind
        self.budget = budget
        self.text = text


class LanguageModel(Protocol):
    @property
    def model_name(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        """The reply text; with ``json_schema``, text meant to match it."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ToolCallingModel(LanguageModel, Protocol):
    """A language model whose backend can offer tools (the model may still refuse them)."""

    async def complete_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        temperature: float | None = None,
    ) -> AssistantTurn:
        """The turn (reply budget); a call of an offered tool written as text is a call."""
        ...


@runtime_checkable
class StreamingModel(LanguageModel, Protocol):
    """A language model whose backend streams the reply as the model writes it."""

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        on_text: TextSink,
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
    ) -> AssistantTurn:
        """A reply whose text goes to ``on_text`` as it is written (a call written as text
        too: the caller holds it back); the whole turn at the end. It may raise midway."""
        ...
