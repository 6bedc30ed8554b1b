"""The Ollama backend against a real Ollama-shaped HTTP server on 127.0.0.1."""

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
    TokenBudgets,
)
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.write.prompts import extraction
from tests.servers.ollama_server import DROP, Failure, OllamaServer, Slow, prompt_of

MODEL = "llama3.1:8b"
HELLO = [ChatMessage("system", "be brief"), ChatMessage("user", "hello")]


@pytest.fixture
def server() -> Iterator[OllamaServer]:
    with OllamaServer(models=(MODEL,)) as started:
        yield started


def backend(server: OllamaServer, *, timeout: float = 10.0) -> OllamaLanguageModel:
    return OllamaLanguageModel(
        MODEL, host=server.base_url, timeout=timeout, retry_pause_seconds=0.01
    )


async def test_reply_text_and_request_shape(server: OllamaServer) -> None:
    server.replies.append("Hi there")
    model = backend(server)
    assert await model.complete(HELLO, temperature=0.2) == "Hi there"
    await model.aclose()
    body = server.requests[0]
    assert body["model"] == MODEL
    assert body["stream"] is False
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]
    assert body["options"] == {"temperature": 0.2, "num_predict": TokenBudgets().reply}
    assert "format" not in body


async def test_json_schema_goes_into_format(server: OllamaServer) -> None:
    server.replies.append('{"facts": []}')
    model = backend(server)
    schema = extraction.json_schema()
    assert json.loads(await model.complete(HELLO, json_schema=schema)) == {"facts": []}
    await model.aclose()
    assert server.requests[0]["format"] == schema


async def test_missing_model_says_to_pull_it(server: OllamaServer) -> None:
    model = OllamaLanguageModel("qwen2.5:7b", host=server.base_url)
    with pytest.raises(ModelNotFound, match=r"run `ollama pull qwen2\.5:7b`") as caught:
        await model.complete(HELLO)
    await model.aclose()
    assert "not found" in str(caught.value)


async def test_server_error_is_a_response_error(server: OllamaServer) -> None:
    server.replies.append(Failure(500, "llama runner process has terminated"))
    model = backend(server)
    with pytest.raises(LanguageModelResponseError, match="llama runner process has terminated"):
        await model.complete(HELLO)
    await model.aclose()
    assert len(server.requests) == 1  # a server error is not retried


async def test_dropped_connection_is_retried(server: OllamaServer) -> None:
    server.replies.extend([DROP, "answer after a dropped connection"])
    model = backend(server)
    assert await model.complete(HELLO) == "answer after a dropped connection"
    await model.aclose()
    assert len(server.requests) == 2


async def test_gives_up_after_three_attempts(server: OllamaServer) -> None:
    server.replies.extend([DROP, DROP, DROP, "too late"])
    model = backend(server)
    with pytest.raises(LanguageModelUnavailable, match="after 3 attempts"):
        await model.complete(HELLO)
    await model.aclose()
    assert len(server.requests) == 3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_nothing_listening_is_unavailable() -> None:
    model = OllamaLanguageModel(
        MODEL, host=f"http://127.0.0.1:{free_port()}", retry_pause_seconds=0.01
    )
    with pytest.raises(LanguageModelUnavailable, match="is `ollama serve` running"):
        await model.complete(HELLO)
    await model.aclose()


async def test_timeout_is_unavailable_and_not_retried(server: OllamaServer) -> None:
    server.replies.append(Slow(1.0, "too slow"))
    model = backend(server, timeout=0.2)
    with pytest.raises(LanguageModelUnavailable, match=r"did not answer within 0\.2 s"):
        await model.complete(HELLO)
    await model.aclose()
    assert len(server.requests) == 1


async def test_server_records_prompts_for_other_tests(server: OllamaServer) -> None:
    server.fallback = lambda body: f"echo: {body['messages'][-1]['content']}"
    model = backend(server)
    assert await model.complete(HELLO) == "echo: hello"
    await model.aclose()
    assert "be brief" in prompt_of(server.requests[0])
