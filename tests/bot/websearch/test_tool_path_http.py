"""The tool path over real HTTP: the backend built from the config, an Ollama-shaped or
OpenAI-compatible server and a SearXNG-shaped server, all on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_application
from bot.config import Config
from memory.embedding import Embedder
from memory.llm import ChatMessage
from memory.recall import FastEmbedReranker
from tests.bot.core.harness import Harness
from tests.bot.websearch.web_bot import TIMEANDDATE, WebMind, search
from tests.servers.ollama_server import OllamaServer, ToolCalls
from tests.servers.openai_server import OpenAICompatibleServer
from tests.servers.searxng_server import SearxngShapedServer

MODEL = "qwen2.5:7b"
Server = OllamaServer | OpenAICompatibleServer
PARIS_CALL = ToolCalls((("web_search", {"queries": ["weather in Paris today"]}),))


def answering(mind: WebMind) -> Callable[[dict[str, Any]], str]:
    """The server side of a model: the request's messages through the scripted mind."""

    def reply(body: dict[str, Any]) -> str:
        messages = [ChatMessage(m["role"], m.get("content") or "") for m in body["messages"]]
        answer = mind.answer(messages)
        assert isinstance(answer, str), "tool calls are scripted as the server's replies"
        return answer

    return reply


def server_for(provider: str, mind: WebMind, *, tools: bool) -> Server:
    if provider == "ollama":
        without = () if tools else (MODEL,)
        return OllamaServer(models=(MODEL,), models_without_tools=without, fallback=answering(mind))
    refusal = None if tools else (400, f"registry.ollama.ai/library/{MODEL} does not support tools")
    return OpenAICompatibleServer(model=MODEL, fallback=answering(mind), tools_refusal=refusal)


async def ask_paris(tmp_path: Path, embedder: Embedder, server: Server, searxng_url: str) -> str:
    config = Config.model_validate(
        {
            "storage": {"data_dir": str(tmp_path / "data")},
            "llm": {"provider": "ollama" if isinstance(server, OllamaServer) else "openai"}
            | {"base_url": server.base_url, "model": MODEL},
            "search": {"searxng_url": searxng_url, "timeout_seconds": 2.0},
        }
    )
    reranker = FastEmbedReranker(cache_dir=tmp_path / "no-models", local_files_only=True)
    app = await build_application(config, embedder=embedder, reranker=reranker)
    bot = Harness(app, llm=None, mind=WebMind())  # type: ignore[arg-type]
    try:
        # Learning paused: the memory worker would talk to the same server concurrently,
        # and these tests script the server's answers in the order the tool path asks.
        await bot.say("alice", "!memory pause")
        return await bot.say("alice", "what's the weather in Paris?")
    finally:
        await app.aclose()


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_tool_call_round_trip(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer, provider: str
) -> None:
    mind = WebMind(replies=[f"8 °C and passing clouds [1] {TIMEANDDATE}"])
    with server_for(provider, mind, tools=True) as server:
        server.replies.append(PARIS_CALL)
        answer = await ask_paris(tmp_path, embedder, server, searxng.base_url)

    assert answer == f"8 °C and passing clouds [1] {TIMEANDDATE}"
    assert searxng.queries == ["weather in Paris today"]
    offered, answered = server.requests[:2]
    assert [tool["function"]["name"] for tool in offered["tools"]] == ["web_search"]
    call, result = answered["messages"][-2:]
    assert call["tool_calls"][0]["function"]["name"] == "web_search"
    assert result["role"] == "tool"
    assert f"URL: {TIMEANDDATE}" in result["content"]
    if provider == "openai":
        assert result["tool_call_id"] == call["tool_calls"][0]["id"] == "call_0"
    else:
        assert result["tool_name"] == "web_search"


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_server_refusing_tools_falls_back_to_the_decision(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer, provider: str
) -> None:
    mind = WebMind(searches=[search("weather in Paris today")], replies=["8 °C [1]"])
    with server_for(provider, mind, tools=False) as server:
        answer = await ask_paris(tmp_path, embedder, server, searxng.base_url)

    assert answer == "8 °C [1]"
    assert searxng.queries == ["weather in Paris today"]
    refused, decided, replied = server.requests[:3]
    assert refused["tools"]
    # (the ollama client always sends "tools", empty when none are offered)
    assert not decided.get("tools") and not replied.get("tools")
    assert f"URL: {TIMEANDDATE}" in replied["messages"][0]["content"]
