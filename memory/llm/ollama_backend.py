"""Chat completions from an Ollama server through ``ollama.AsyncClient``.

A refused or dropped connection is retried a few times with a short pause (a local Ollama
that is starting or loading a model refuses briefly); a timeout is not (the caller would
wait twice as long), nor a stream that broke after some of its text was handed on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import httpx
import ollama

from memory.llm.base import (
    AnswerCut,
    AssistantTurn,
    CallKind,
    ChatMessage,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
    TextSink,
    TokenBudgets,
    ToolCall,
    ToolsNotSupported,
    ToolSpec,
    WrongProvider,
    tool_definition,
)
from memory.llm.text_tool_calls import turn_of
from memory.text import valid_data, valid_text

# What ``ollama.AsyncClient`` lets through when the connection fails or breaks mid-request.
CONNECTION_ERRORS = (
    ConnectionError,
    httpx.ConnectError,
    httpx.RemoteProtocolError,
    httpx.ReadError,
)
CONNECTION_ATTEMPTS = 3
Result = TypeVar("Result")


def chat_message(message: ChatMessage) -> dict[str, Any]:
    body: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        body["tool_calls"] = [
            {"function": {"name": call.name, "arguments": call.arguments}}
            for call in message.tool_calls
        ]
    if message.tool_call is not None:
        body["tool_name"] = message.tool_call.name
    return body


class OllamaLanguageModel:
    """The LanguageModel port over Ollama's ``/api/chat``."""

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout: float = 120.0,
        retry_pause_seconds: float = 0.5,
        budgets: TokenBudgets | None = None,
        seed: int | None = None,
        client: ollama.AsyncClient | None = None,
    ) -> None:
        self._model = model
        self._budgets = budgets or TokenBudgets()
        self._seed = seed
        self._host = host
        self._pause = retry_pause_seconds
        self._timeout = timeout
        self._client = client or ollama.AsyncClient(host=host, timeout=timeout)

    @property
    def model_name(self) -> str:
        return self._model

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        schema = None if json_schema is None else dict(json_schema)
        return (await self._answer(messages, kind, temperature, format=schema)).text

    async def complete_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        temperature: float | None = None,
    ) -> AssistantTurn:
        return await self._answer(messages, CallKind.REPLY, temperature, tools=tools)

    async def _answer(
        self,
        messages: Sequence[ChatMessage],
        kind: CallKind,
        temperature: float | None,
        *,
        format: dict[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> AssistantTurn:
        async def once() -> Any:
            return await self._client.chat(
                model=self._model,
                messages=[chat_message(message) for message in messages],
                tools=[tool_definition(tool) for tool in tools] or None,
                format=format,
                options=self._options(kind, temperature),
                stream=False,
            )

        response = await self._retrying(once, may_retry=lambda: True)
        turn = assistant_turn(response, tools) if tools else AssistantTurn(reply_text(response))
        return self._uncut(response, kind, turn)

    def _uncut(self, response: Any, kind: CallKind, turn: AssistantTurn) -> AssistantTurn:
        """``turn``, or :class:`AnswerCut` if the answer stopped at ``kind``'s budget."""
        if getattr(response, "done_reason", None) == "length":
            raise AnswerCut(kind, self._budgets.for_kind(kind), turn.text)
        return turn

    def _options(self, kind: CallKind, temperature: float | None) -> dict[str, Any]:
        options: dict[str, Any] = {"num_predict": self._budgets.for_kind(kind)}
        if temperature is not None:
            options["temperature"] = temperature
        if self._seed is not None:
            options["seed"] = self._seed
        return options

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        on_text: TextSink,
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
    ) -> AssistantTurn:
        definitions = [tool_definition(tool) for tool in tools] or None
        options = self._options(CallKind.REPLY, temperature)
        pieces: list[str] = []
        calls: list[ToolCall] = []
        last: list[Any] = []

        async def once() -> None:
            for accumulated in (pieces, calls, last):
                accumulated.clear()
            parts = await self._client.chat(
                model=self._model,
                messages=[chat_message(message) for message in messages],
                tools=definitions,
                options=options,
                stream=True,
            )
            async for part in parts:
                last[:] = [part]
                calls.extend(tool_calls_of(part.message))
                piece = valid_text(part.message.content or "")
                if piece:
                    pieces.append(piece)
                    await on_text(piece)

        await self._retrying(once, may_retry=lambda: not pieces)
        if not last or not last[0].done:
            raise LanguageModelUnavailable(
                f"Ollama at {self._host} ended the stream before the answer was complete"
            )
        turn = turn_of("".join(pieces), tuple(calls), tools)
        return self._uncut(last[0], CallKind.REPLY, turn)

    async def _retrying(
        self, call: Callable[[], Awaitable[Result]], *, may_retry: Callable[[], bool]
    ) -> Result:
        """``call()``, again after a refused or dropped connection while ``may_retry()``."""
        for attempt in range(1, CONNECTION_ATTEMPTS + 1):
            try:
                return await call()
            except CONNECTION_ERRORS as error:
                if attempt == CONNECTION_ATTEMPTS or not may_retry():
                    raise LanguageModelUnavailable(
                        f"Ollama at {self._host} is not reachable after {attempt} attempts "
                        f"(is `ollama serve` running? check llm.base_url): {error}"
                    ) from error
                await asyncio.sleep(self._pause * attempt)
            except httpx.TimeoutException as error:
                raise LanguageModelUnavailable(
                    f"Ollama at {self._host} did not answer within {self._timeout:g} s "
                    f"(raise llm.timeout_seconds or use a smaller model): {error!r}"
                ) from error
            except ollama.ResponseError as error:
                raise self._translate(error) from error
        raise AssertionError("unreachable: the loop returns or raises")

    def _translate(self, error: ollama.ResponseError) -> Exception:
        detail = str(error.error)
        # Ollama's own 404 names the model; any other comes from a server without /api/chat.
        lowered = detail.lower()
        if error.status_code == 404 and "model" in lowered and "not found" in lowered:
            return ModelNotFound(
                f"Ollama at {self._host} does not have the model {self._model!r}: run "
                f"`ollama pull {self._model}` (or set llm.model to a pulled one); Ollama said: "
                f"{detail}"
            )
        if error.status_code in (404, 405):
            return WrongProvider(
                f"the server at {self._host} is not Ollama: it answered HTTP "
                f"{error.status_code} to /api/chat ({detail[:120]}). If it is an "
                f"OpenAI-compatible server (llama.cpp, vLLM, LM Studio), set llm.provider = "
                f'"openai" and llm.base_url to its API root ending in /v1; if it is Ollama, '
                f"fix llm.base_url (no /v1)"
            )
        if error.status_code == 400 and "does not support tools" in str(error.error):
            return ToolsNotSupported(
                f"the Ollama model {self._model!r} does not support tools: {error.error}"
            )
        return LanguageModelResponseError(
            f"Ollama at {self._host} answered with an error "
            f"(status {error.status_code}): {error.error}"
        )

    async def aclose(self) -> None:
        client = getattr(self._client, "_client", None)
        if isinstance(client, httpx.AsyncClient):
            await client.aclose()


def reply_text(response: Any) -> str:
    content = getattr(getattr(response, "message", None), "content", None)
    if not isinstance(content, str):
        raise LanguageModelResponseError(f"Ollama's answer has no message text: {response!r:.200}")
    # A "\\ud800" in the answer would fail every layer that stores or sends it.
    return valid_text(content)


def tool_calls_of(message: Any) -> tuple[ToolCall, ...]:
    calls = getattr(message, "tool_calls", None) or ()
    return tuple(
        ToolCall(
            valid_text(str(call.function.name)), valid_data(dict(call.function.arguments or {}))
        )
        for call in calls
    )


def assistant_turn(response: Any, tools: Sequence[ToolSpec]) -> AssistantTurn:
    message = getattr(response, "message", None)
    calls = tool_calls_of(message)
    if not calls:
        return turn_of(reply_text(response), (), tools)
    content = getattr(message, "content", None)
    return AssistantTurn(valid_text(content) if isinstance(content, str) else "", calls)
