"""The reply path over real HTTP: an OpenAI-compatible server and an Ollama-shaped server on
127.0.0.1, built from the config exactly as ``mnemo chat`` builds them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_application
from bot.config import Config
from bot.core import APOLOGY
from memory.embedding import Embedder
from memory.llm import ChatMessage
from memory.recall import FastEmbedReranker
from tests.bot.core.harness import Harness, ScriptedMind, fact
from tests.servers.ollama_server import OllamaServer
from tests.servers.openai_server import OpenAICompatibleServer


def answering(mind: ScriptedMind) -> Callable[[dict[str, Any]], str]:
    """The server side of a model: the request's messages through the scripted mind."""

    def reply(body: dict[str, Any]) -> str:
        return mind([ChatMessage(m["role"], m["content"]) for m in body["messages"]])

    return reply


def llm_config(tmp_path: Path, provider: str, base_url: str, model: str) -> Config:
    return Config.model_validate(
        {
            "storage": {"data_dir": str(tmp_path / "data")},
            "llm": {"provider": provider, "base_url": base_url, "model": model},
        }
    )


async def harness_for(tmp_path: Path, config: Config, embedder: Embedder) -> Harness:
    reranker = FastEmbedReranker(cache_dir=tmp_path / "no-models", local_files_only=True)
    app = await build_application(config, embedder=embedder, reranker=reranker)
    # The mind is not used directly: the server answers through it.
    return Harness(app, llm=None, mind=ScriptedMind())  # type: ignore[arg-type]


def system_prompts(requests: list[dict[str, Any]]) -> list[str]:
    """System messages of the reply requests, joined (structured requests carry a schema)."""
    return [
        "\n".join(m["content"] for m in r["messages"] if m["role"] == "system")
        for r in requests
        if "response_format" not in r and "format" not in r
    ]


async def tell_and_ask(bot: Harness, mind: ScriptedMind) -> None:
    mind.facts["My dog is called Rex."] = [fact("My dog is called Rex", "possession")]
    mind.replies += ["Hello Rex!", "Your dog is Rex."]
    assert await bot.say("alice", "My dog is called Rex.") == "Hello Rex!"
    assert await bot.say("alice", "What's my dog's name?") == "Your dog is Rex."


async def test_openai_compatible_reply_path(tmp_path: Path, embedder: Embedder) -> None:
    mind = ScriptedMind()
    with OpenAICompatibleServer(model="qwen2.5-7b-instruct", fallback=answering(mind)) as server:
        config = llm_config(tmp_path, "openai", server.base_url, "qwen2.5-7b-instruct")
        bot = await harness_for(tmp_path, config, embedder)
        try:
            await tell_and_ask(bot, mind)
        finally:
            await bot.app.aclose()
    prompts = system_prompts(server.requests)
    assert len(prompts) == 2
    assert "- Alice's dog is called Rex" in prompts[1]
    structured = [r for r in server.requests if "response_format" in r]
    assert structured and structured[0]["response_format"]["type"] == "json_schema"


async def test_ollama_reply_path(tmp_path: Path, embedder: Embedder) -> None:
    mind = ScriptedMind()
    with OllamaServer(models=("llama3.1:8b",), fallback=answering(mind)) as server:
        config = llm_config(tmp_path, "ollama", server.base_url, "llama3.1:8b")
        bot = await harness_for(tmp_path, config, embedder)
        try:
            await tell_and_ask(bot, mind)
        finally:
            await bot.app.aclose()
    prompts = system_prompts(server.requests)
    assert len(prompts) == 2
    assert "- Alice's dog is called Rex" in prompts[1]
    assert any("format" in r for r in server.requests)


@pytest.mark.parametrize("provider", ["ollama", "openai"])
async def test_missing_model_apologises_names_the_fix_and_keeps_the_message(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture, provider: str
) -> None:
    server = (
        OllamaServer(models=("other",))
        if provider == "ollama"
        else (OpenAICompatibleServer(model="other"))
    )
    with server:
        config = llm_config(tmp_path, provider, server.base_url, "llama3.1:8b")
        bot = await harness_for(tmp_path, config, embedder)
        try:
            assert await bot.say("alice", "I grew up in Porto.") == APOLOGY
            later = bot.clock.now.replace(year=2100)
            queued = await bot.app.store.read(lambda tx: tx.pending.due(later))
        finally:
            await bot.app.aclose()
    fix = "ollama pull llama3.1:8b" if provider == "ollama" else "fix llm.model"
    assert fix in caplog.text
    assert [p.text for p in queued] == ["I grew up in Porto."]
    assert "ModelNotFound" in (queued[0].last_error or "")


@pytest.mark.parametrize("configured", ["ollama", "openai"])
async def test_a_server_of_the_other_provider_is_named_with_the_fix(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture, configured: str
) -> None:
    """provider = "ollama" at an OpenAI-compatible server (and the reverse): the person gets
    the short apology, the log names the server's kind and the setting that fits, and the
    message stays queued for when the config is fixed."""
    server = OpenAICompatibleServer(model="m") if configured == "ollama" else OllamaServer()
    with server:
        base_url = server.origin if configured == "ollama" else server.base_url
        bot = await harness_for(tmp_path, llm_config(tmp_path, configured, base_url, "m"), embedder)
        try:
            assert await bot.say("alice", "I grew up in Porto.") == APOLOGY
            later = bot.clock.now.replace(year=2100)
            queued = await bot.app.store.read(lambda tx: tx.pending.due(later))
        finally:
            await bot.app.aclose()
    other = "openai" if configured == "ollama" else "ollama"
    assert f'set llm.provider = "{other}"' in caplog.text
    assert "ollama pull" not in caplog.text and "not available" in APOLOGY
    assert [p.text for p in queued] == ["I grew up in Porto."]
    assert "WrongProvider" in (queued[0].last_error or "")
