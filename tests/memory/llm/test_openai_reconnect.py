"""A kept-alive connection the server closed before answering is tried once more.

llama.cpp's server closes idle keep-alive connections; the next request on one fails with
"Server disconnected without sending a response" before any byte of the answer. The
transport below is a test double for that server: it drops the first request, then answers.
"""

from __future__ import annotations

import json

import httpx
import pytest

from memory.llm import ChatMessage, LanguageModelUnavailable
from memory.llm.openai_backend import OpenAILanguageModel

ANSWER = {"choices": [{"message": {"content": "Hello."}, "finish_reason": "stop"}]}
STREAM = (
    'data: {"choices": [{"delta": {"content": "Hel"}}]}\n\n'
    'data: {"choices": [{"delta": {"content": "lo."}, "finish_reason": "stop"}]}\n\n'
    "data: [DONE]\n\n"
)


def dropping_first(drops: int) -> tuple[httpx.MockTransport, list[int]]:
    seen: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(1)
        if len(seen) <= drops:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if json.loads(request.content).get("stream"):
            return httpx.Response(200, text=STREAM, headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=ANSWER)

    return httpx.MockTransport(handle), seen


def model_on(transport: httpx.MockTransport) -> OpenAILanguageModel:
    client = httpx.AsyncClient(transport=transport)
    return OpenAILanguageModel("m", base_url="http://127.0.0.1:1/v1", client=client)


HELLO = [ChatMessage(role="user", content="Hi")]


async def test_a_call_on_a_closed_connection_is_sent_once_more() -> None:
    transport, seen = dropping_first(1)
    assert await model_on(transport).complete(HELLO) == "Hello."
    assert len(seen) == 2


async def test_a_stream_on_a_closed_connection_is_sent_once_more() -> None:
    transport, seen = dropping_first(1)
    shown: list[str] = []

    async def show(piece: str) -> None:
        shown.append(piece)

    turn = await model_on(transport).stream(HELLO, show)
    assert turn.text == "Hello." and "".join(shown) == "Hello."
    assert len(seen) == 2


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_server_that_keeps_dropping_is_unavailable(streamed: bool) -> None:
    transport, seen = dropping_first(5)

    async def show(piece: str) -> None:
        raise AssertionError("nothing was received")

    model = model_on(transport)
    with pytest.raises(LanguageModelUnavailable, match="not reachable"):
        await (model.stream(HELLO, show) if streamed else model.complete(HELLO))
    assert len(seen) == 2
