"""Chat completions from any OpenAI-compatible server (llama.cpp server, vLLM, LM Studio).

``base_url`` is the API root, usually ending in ``/v1``. Servers refuse tools in their own
words (Ollama: "does not support tools"; vLLM: "enable-auto-tool-choice"; llama.cpp: "tools
param requires --jinja flag"): all become :class:`ToolsNotSupported`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

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
from memory.llm.openai_stream import StreamedAnswer
from memory.llm.text_tool_calls import turn_of
from memory.text import valid_data

log = logging.getLogger(__name__)

SCHEMA_NAME = "response"
# Words in a refusal that is about tools, not about a malformed request.
TOOL_REFUSALS = ("not support", "unsupported", "jinja", "enable-auto-tool-choice")


def call_id(call: ToolCall) -> str:
    return call.id or call.name


def tool_call_body(call: ToolCall) -> dict[str, Any]:
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    return {"id": call_id(call), "type": "function", "function": function}


def message_body(message: ChatMessage) -> dict[str, Any]:
    body: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        body["tool_calls"] = [tool_call_body(call) for call in message.tool_calls]
    if message.tool_call is not None:
        body["tool_call_id"] = call_id(message.tool_call)
    return body


class _NothingReceived(httpx.RemoteProtocolError):
    """The server closed the connection before any of the answer arrived (a transport error:
    a second time, the server is not reachable)."""


def error_detail(response: httpx.Response) -> str:
    """The server's own error message if it sent one in the usual shape, else the body."""
    try:
        payload = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    error = payload.get("error") if isinstance(payload, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return response.text.strip()[:300]


def refuses_tools(response: httpx.Response, detail: str) -> bool:
    if response.status_code not in (400, 422, 500, 501):
        return False
    lowered = detail.lower()
    return "tool" in lowered and any(words in lowered for words in TOOL_REFUSALS)


def answer_message(payload: Any) -> Any:
    try:
        message = payload["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as error:
        raise LanguageModelResponseError(
            f"the server's answer has no choices[0].message: {str(payload)[:200]}"
        ) from error
    if not isinstance(message, dict):
        raise LanguageModelResponseError(f"choices[0].message is not an object: {message!r:.200}")
    return message


def reply_text(payload: Any) -> str:
    content = answer_message(payload).get("content")
    if not isinstance(content, str):
        raise LanguageModelResponseError("the server's answer content is not text")
    return content


def was_cut(payload: Any) -> bool:
    try:
        return bool(payload["choices"][0].get("finish_reason") == "length")
    except (KeyError, IndexError, TypeError, AttributeError):
        return False


def parse_arguments(name: str, raw: Any) -> dict[str, Any]:
    """The call's arguments as an object; ``{}`` (and a log line) when they are not one."""
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = None
    if isinstance(arguments, dict):
        # A JSON string inside the answer: its "\\ud800" escapes are decoded only here.
        return dict(valid_data(arguments))
    log.warning(
        "the model's call of tool %r has arguments that are not an object: %.300r", name, raw
    )
    return {}


def tool_call(number: int, item: Any) -> ToolCall:
    try:
        function = item["function"]
        name = str(function["name"])
    except (KeyError, TypeError) as error:
        raise LanguageModelResponseError(
            f"a tool call without a function name: {item!r:.200}"
        ) from error
    arguments = parse_arguments(name, function.get("arguments"))
    return ToolCall(name, arguments, str(item.get("id") or f"call_{number}"))


def assistant_turn(payload: Any, tools: Sequence[ToolSpec]) -> AssistantTurn:
    message = answer_message(payload)
    items = message.get("tool_calls") or []
    calls = tuple(tool_call(number, item) for number, item in enumerate(items))
    content = message.get("content")
    text = (content if isinstance(content, str) else "") if calls else reply_text(payload)
    return turn_of(text, calls, tools)


class OpenAILanguageModel:
    """The LanguageModel port over ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        budgets: TokenBudgets | None = None,
        seed: int | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._model = model
        self._budgets = budgets or TokenBudgets()
        self._seed = seed
        self._base_url = base_url.rstrip("/")
        self._chat_url = f"{self._base_url}/chat/completions"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient(timeout=timeout, headers=headers)

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
        payload = await self._post(self._body(messages, kind, temperature, json_schema=json_schema))
        return self._turn(payload, kind).text

    async def complete_with_tools(
        self,
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec],
        *,
        temperature: float | None = None,
    ) -> AssistantTurn:
        payload = await self._post(self._body(messages, CallKind.REPLY, temperature, tools=tools))
        return self._turn(payload, CallKind.REPLY, tools)

    def _turn(self, payload: Any, kind: CallKind, tools: Sequence[ToolSpec] = ()) -> AssistantTurn:
        """The answer's turn; :class:`AnswerCut` if it stopped at ``kind``'s budget."""
        turn = assistant_turn(payload, tools) if tools else AssistantTurn(reply_text(payload))
        if was_cut(payload):
            raise AnswerCut(kind, self._budgets.for_kind(kind), turn.text)
        return turn

    def _body(
        self,
        messages: Sequence[ChatMessage],
        kind: CallKind,
        temperature: float | None,
        *,
        json_schema: Mapping[str, Any] | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> dict[str, Any]:
        """The request body of one call, with ``kind``'s token budget."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [message_body(m) for m in messages],
            "stream": False,
            "max_tokens": self._budgets.for_kind(kind),
        }
        if temperature is not None:
            body["temperature"] = temperature
        if self._seed is not None:
            body["seed"] = self._seed
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": dict(json_schema)},
            }
        if tools:
            body["tools"] = [tool_definition(tool) for tool in tools]
        return body

    async def _post(self, body: dict[str, Any]) -> Any:
        async with self._transport_errors():
            try:
                response = await self._client.post(self._chat_url, json=body)
            except httpx.RemoteProtocolError:
                # A kept-alive connection the server had closed: once more, on a new one.
                response = await self._client.post(self._chat_url, json=body)
        return self._read(response, offered_tools="tools" in body)

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        on_text: TextSink,
        *,
        tools: Sequence[ToolSpec] = (),
        temperature: float | None = None,
    ) -> AssistantTurn:
        body = {**self._body(messages, CallKind.REPLY, temperature, tools=tools), "stream": True}
        async with self._transport_errors():
            try:
                answer = await self._stream_once(body, on_text)
            except _NothingReceived:
                # A kept-alive connection the server had closed: once more, on a new one.
                answer = await self._stream_once(body, on_text)
        if not answer.complete:
            raise LanguageModelUnavailable(
                f"the OpenAI-compatible server at {self._base_url} ended the stream before "
                "the answer was complete"
            )
        return self._turn(answer.payload(), CallKind.REPLY, tools)

    async def _stream_once(self, body: dict[str, Any], on_text: TextSink) -> StreamedAnswer:
        answer = StreamedAnswer()
        try:
            async with self._client.stream("POST", self._chat_url, json=body) as response:
                if not response.is_success:
                    await response.aread()
                    self._read(response, offered_tools="tools" in body)  # raises the error answered
                async for line in response.aiter_lines():
                    piece = answer.add_line(line)
                    if piece:
                        await on_text(piece)
        except httpx.RemoteProtocolError as error:
            if not (answer.pieces or answer.calls or answer.complete):
                raise _NothingReceived(str(error)) from error
            raise
        return answer

    @asynccontextmanager
    async def _transport_errors(self) -> AsyncIterator[None]:
        """HTTP transport failures as the port's :class:`LanguageModelUnavailable`."""
        try:
            yield
        except httpx.TimeoutException as error:
            raise LanguageModelUnavailable(
                f"the OpenAI-compatible server at {self._base_url} did not answer in time "
                f"(raise llm.timeout_seconds or check the server): {error!r}"
            ) from error
        except httpx.TransportError as error:
            raise LanguageModelUnavailable(
                f"the OpenAI-compatible server at {self._base_url} is not reachable "
                f"(start it or fix llm.base_url): {error!r}"
            ) from error

    def _read(self, response: httpx.Response, *, offered_tools: bool) -> Any:
        if response.is_success:
            try:
                # A "\\ud800" in the answer would fail every layer that stores or sends it.
                return valid_data(response.json())
            except ValueError as error:
                raise LanguageModelResponseError(
                    f"the server at {self._base_url} did not answer with JSON"
                ) from error
        detail = error_detail(response)
        if offered_tools and refuses_tools(response, detail):
            raise ToolsNotSupported(
                f"the server at {self._base_url} refuses tools for model {self._model!r} "
                f"(HTTP {response.status_code}): {detail}"
            )
        # A 404 that does not name the model is a wrong base_url (below).
        if response.status_code == 404 and "model" in detail.lower():
            raise ModelNotFound(
                f"the server at {self._base_url} does not serve model {self._model!r} "
                f"(load it there or fix llm.model): {detail}"
            )
        if response.status_code in (401, 403):
            raise LanguageModelResponseError(
                f"the server at {self._base_url} refused the request "
                f"(HTTP {response.status_code}; check MNEMO_LLM__API_KEY): {detail}"
            )
        if response.status_code in (404, 405):
            raise WrongProvider(
                f"{self._chat_url} does not exist (HTTP "
                f"{response.status_code}), so this server does not speak the OpenAI API at "
                f"that URL: llm.base_url must be the API root, usually ending in /v1 (Ollama "
                f"also serves it at http://HOST:11434/v1); or, for Ollama's own API, set "
                f'llm.provider = "ollama" and llm.base_url without /v1'
            )
        raise LanguageModelResponseError(
            f"the server at {self._base_url} answered HTTP {response.status_code}: {detail}"
        )

    async def aclose(self) -> None:
        await self._client.aclose()
