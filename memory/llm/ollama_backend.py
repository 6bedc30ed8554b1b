"""Chat completions from an Ollama server through ``ollama.AsyncClient``.

Structured calls pass the JSON schema as ``format=`` (Ollama constrains decoding to it).
Connection failures (refused, dropped) are retried a few times with a short pause, because a
local Ollama that is just starting or reloading a model refuses briefly; a timeout is not
retried, since the caller would wait twice as long for the same overloaded server. Errors are
translated into the port's errors, the original kept as the cause.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import ollama

from memory.llm.base import (
    ChatMessage,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
)

# What ``ollama.AsyncClient`` lets through when the connection fails or breaks mid-request.
CONNECTION_ERRORS = (
    ConnectionError,
    httpx.ConnectError,
    httpx.RemoteProtocolError,
    httpx.ReadError,
)


def chat_messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    return [{"role": message.role, "content": message.content} for message in messages]


def missing_model_error(model: str, host: str, error: ollama.ResponseError) -> ModelNotFound:
    return ModelNotFound(
        f"Ollama at {host} does not have the model {model!r}: run `ollama pull {model}` "
        f"(or set llm.model to a pulled one); Ollama said: {error.error}"
    )


class OllamaLanguageModel:
    """The LanguageModel port over Ollama's ``/api/chat``."""

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        timeout: float = 120.0,
        connection_attempts: int = 3,
        retry_pause_seconds: float = 0.5,
        client: ollama.AsyncClient | None = None,
    ) -> None:
        self._model = model
        self._host = host
        self._attempts = max(1, connection_attempts)
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
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        options = None if temperature is None else {"temperature": temperature}
        schema = None if json_schema is None else dict(json_schema)
        for attempt in range(1, self._attempts + 1):
            try:
                response = await self._client.chat(
                    model=self._model,
                    messages=chat_messages(messages),
                    format=schema,
                    options=options,
                    stream=False,
                )
            except CONNECTION_ERRORS as error:
                if attempt == self._attempts:
                    raise LanguageModelUnavailable(
                        f"Ollama at {self._host} is not reachable after {attempt} attempts "
                        f"(is `ollama serve` running? check llm.base_url): {error}"
                    ) from error
                await asyncio.sleep(self._pause * attempt)
                continue
            except httpx.TimeoutException as error:
                raise LanguageModelUnavailable(
                    f"Ollama at {self._host} did not answer within {self._timeout:g} s "
                    f"(raise llm.timeout_seconds or use a smaller model): {error!r}"
                ) from error
            except ollama.ResponseError as error:
                if error.status_code == 404:
                    raise missing_model_error(self._model, self._host, error) from error
                raise LanguageModelResponseError(
                    f"Ollama at {self._host} answered with an error "
                    f"(status {error.status_code}): {error.error}"
                ) from error
            return reply_text(response)
        raise AssertionError("unreachable: the loop returns or raises")

    async def aclose(self) -> None:
        client = getattr(self._client, "_client", None)
        if isinstance(client, httpx.AsyncClient):
            await client.aclose()


def reply_text(response: Any) -> str:
    content = getattr(getattr(response, "message", None), "content", None)
    if not isinstance(content, str):
        raise LanguageModelResponseError(f"Ollama's answer has no message text: {response!r:.200}")
    return content
