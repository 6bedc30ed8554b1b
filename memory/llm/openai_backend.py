"""Chat completions from any OpenAI-compatible server (llama.cpp server, vLLM, LM Studio).

``base_url`` is the API root that ``/chat/completions`` hangs off, usually ending in ``/v1``
(``http://127.0.0.1:8080/v1``). Structured calls send the JSON schema as
``response_format={"type": "json_schema", ...}``. HTTP and protocol errors are translated
into the port's errors here, with the original kept as the cause.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from memory.llm.base import (
    ChatMessage,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
)

SCHEMA_NAME = "response"


def request_body(
    model: str,
    messages: Sequence[ChatMessage],
    json_schema: Mapping[str, Any] | None,
    temperature: float | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "stream": False,
    }
    if temperature is not None:
        body["temperature"] = temperature
    if json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": SCHEMA_NAME, "schema": dict(json_schema)},
        }
    return body


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


def looks_like_missing_model(response: httpx.Response, detail: str) -> bool:
    if response.status_code != 404:
        return False
    # A 404 for the whole path means a wrong base_url, not a missing model.
    return "model" in detail.lower()


def reply_text(payload: Any) -> str:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as error:
        raise LanguageModelResponseError(
            f"the server's answer has no choices[0].message.content: {str(payload)[:200]}"
        ) from error
    if not isinstance(content, str):
        raise LanguageModelResponseError("the server's answer content is not text")
    return content


class OpenAILanguageModel:
    """The LanguageModel port over ``POST {base_url}/chat/completions``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 120.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._model = model
        self._base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient(timeout=timeout, headers=headers)

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
        url = f"{self._base_url}/chat/completions"
        body = request_body(self._model, messages, json_schema, temperature)
        try:
            response = await self._client.post(url, json=body)
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
        return self._read(response)

    def _read(self, response: httpx.Response) -> str:
        if response.is_success:
            try:
                return reply_text(response.json())
            except ValueError as error:
                raise LanguageModelResponseError(
                    f"the server at {self._base_url} did not answer with JSON"
                ) from error
        detail = error_detail(response)
        if looks_like_missing_model(response, detail):
            raise ModelNotFound(
                f"the server at {self._base_url} does not serve model {self._model!r} "
                f"(load it there or fix llm.model): {detail}"
            )
        if response.status_code in (401, 403):
            raise LanguageModelResponseError(
                f"the server at {self._base_url} refused the request "
                f"(HTTP {response.status_code}; check MNEMO_LLM__API_KEY): {detail}"
            )
        if response.status_code == 404:
            raise LanguageModelResponseError(
                f"{self._base_url}/chat/completions does not exist (HTTP 404): llm.base_url "
                f"should be the API root, usually ending in /v1"
            )
        raise LanguageModelResponseError(
            f"the server at {self._base_url} answered HTTP {response.status_code}: {detail}"
        )

    async def aclose(self) -> None:
        await self._client.aclose()
