"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from memory.llm import (
    ChatMessage,
    LanguageModelResponseError,
    LanguageModelUnavailable,
    ModelNotFound,
    WrongProvider,
)
from memory.llm.openai_backend import OpenAILanguageModel
from tests.servers.openai_server import OpenAICompatibleServer

MESSAGES = [ChatMessage("system", "You are terse."), ChatMessage("user", "Say hi")]


@pytest.fixture
def server() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(model="qwen2.5-7b") as running:
        yield running


async def test_reply_text_and_request_shape(server: OpenAICompatibleServer) -> None:
    server.replies.append("hi")
    model = OpenAILanguageModel("qwen2.5-7b", base_url=server.base_url)
    try:
        assert await model.complete(MESSAGES, temperature=0.2) == "hi"
    finally:
        await model.aclose()
    body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Say hi"},
    ]
    assert body["temperature"] == 0.2
    assert "response_format" not in body


async def test_json_schema_goes_into_response_format(server: OpenAICompatibleServer) -> None:
    schema = {"type": "object", "properties": {"facts": {"type": "array"}}}
    server.replies.append(json.dumps({"facts": []}))
    model = OpenAILanguageModel("qwen2.5-7b", base_url=server.base_url + "/")
    try:
        text = await model.complete(MESSAGES, json_schema=schema)
    finally:
        await model.aclose()
    assert json.loads(text) == {"facts": []}
    response_format = server.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["schema"] == schema


async def test_unknown_model_is_model_not_found(server: OpenAICompatibleServer) -> None:
    model = OpenAILanguageModel("llama-70b", base_url=server.base_url)
    try:
        with pytest.raises(ModelNotFound, match=r"llama-70b.*fix llm.model"):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()


async def test_wrong_base_url_says_so(server: OpenAICompatibleServer) -> None:
    base_without_v1 = server.base_url.removesuffix("/v1")
    model = OpenAILanguageModel("qwen2.5-7b", base_url=base_without_v1)
    try:
        with pytest.raises(WrongProvider, match=r"ending in /v1.*llm.provider = \"ollama\""):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()


async def test_api_key_is_sent_and_refusal_named() -> None:
    with OpenAICompatibleServer(model="m", api_key="sekret", fallback="ok") as server:
        good = OpenAILanguageModel("m", base_url=server.base_url, api_key="sekret")
        bad = OpenAILanguageModel("m", base_url=server.base_url, api_key="wrong")
        try:
            assert await good.complete(MESSAGES) == "ok"
            with pytest.raises(LanguageModelResponseError, match="MNEMO_LLM__API_KEY"):
                await bad.complete(MESSAGES)
        finally:
            await good.aclose()
            await bad.aclose()


async def test_server_error_is_response_error(server: OpenAICompatibleServer) -> None:
    # No scripted reply left: the server answers 500.
    model = OpenAILanguageModel("qwen2.5-7b", base_url=server.base_url)
    try:
        with pytest.raises(LanguageModelResponseError, match="HTTP 500"):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_unreachable_server_is_unavailable() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAILanguageModel("m", base_url=base_url, timeout=2)
    try:
        with pytest.raises(LanguageModelUnavailable, match="not reachable"):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()
