"""Tool calls through both backends, against real HTTP servers on 127.0.0.1 shaped like
Ollama and like an OpenAI-compatible server (request and response formats of each)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from memory.llm import (
    AssistantTurn,
    ChatMessage,
    LanguageModelResponseError,
    ScriptedLanguageModel,
    ToolCall,
    ToolCallingModel,
    ToolsNotSupported,
    ToolSpec,
    tool_result,
)
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from tests.servers.ollama_server import Failure, OllamaServer, ToolCalls
from tests.servers.openai_server import OpenAICompatibleServer

OLLAMA_MODEL = "llama3.1:8b"
OPENAI_MODEL = "qwen2.5-7b-instruct"
WEATHER = ToolSpec(
    "web_search",
    "Search the web.",
    {"type": "object", "properties": {"queries": {"type": "array"}}, "required": ["queries"]},
)
QUESTION = [ChatMessage("system", "You help."), ChatMessage("user", "weather in Paris?")]
ARGUMENTS = {"queries": ["Paris weather 2026-11-29"]}
TOOL_DEFINITION = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": dict(WEATHER.parameters_schema),
    },
}


@pytest.fixture
def ollama() -> Iterator[OllamaServer]:
    with OllamaServer(models=(OLLAMA_MODEL, "gemma3:4b"), models_without_tools=("gemma3:4b",)) as s:
        yield s


@pytest.fixture
def openai() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(model=OPENAI_MODEL) as server:
        yield server


def ollama_model(server: OllamaServer, name: str = OLLAMA_MODEL) -> OllamaLanguageModel:
    return OllamaLanguageModel(name, host=server.base_url, retry_pause_seconds=0.01)


def openai_model(server: OpenAICompatibleServer) -> OpenAILanguageModel:
    return OpenAILanguageModel(OPENAI_MODEL, base_url=server.base_url)


def second_round(call: ToolCall) -> list[ChatMessage]:
    return [*QUESTION, AssistantTurn("", (call,)).as_message(), tool_result(call, "[1] results")]


async def test_ollama_offers_tools_and_reads_the_call(ollama: OllamaServer) -> None:
    ollama.replies.append(ToolCalls((("web_search", ARGUMENTS),)))
    model = ollama_model(ollama)
    try:
        turn = await model.complete_with_tools(QUESTION, [WEATHER], temperature=0.0)
    finally:
        await model.aclose()
    assert turn == AssistantTurn("", (ToolCall("web_search", ARGUMENTS),))
    body = ollama.requests[0]
    assert body["tools"] == [TOOL_DEFINITION]
    assert body["stream"] is False
    assert "format" not in body or body["format"] is None


async def test_ollama_gives_the_result_back_as_a_tool_message(ollama: OllamaServer) -> None:
    ollama.replies.append("Showers in Paris [1]")
    model = ollama_model(ollama)
    try:
        call = ToolCall("web_search", ARGUMENTS)
        turn = await model.complete_with_tools(second_round(call), [WEATHER])
    finally:
        await model.aclose()
    assert turn == AssistantTurn("Showers in Paris [1]")
    messages = ollama.requests[0]["messages"]
    # Ollama's client leaves empty fields out, so the assistant turn has no "content".
    assert messages[2] == {
        "role": "assistant",
        "tool_calls": [{"function": {"name": "web_search", "arguments": ARGUMENTS}}],
    }
    assert messages[3] == {"role": "tool", "content": "[1] results", "tool_name": "web_search"}


async def test_ollama_model_without_tools_raises_tools_not_supported(ollama: OllamaServer) -> None:
    ollama.replies.append("plain answer")
    model = ollama_model(ollama, "gemma3:4b")
    try:
        with pytest.raises(ToolsNotSupported, match=r"gemma3:4b.*does not support tools"):
            await model.complete_with_tools(QUESTION, [WEATHER])
        # The same model still answers without tools.
        assert await model.complete(QUESTION) == "plain answer"
    finally:
        await model.aclose()


async def test_ollama_other_400_is_not_mistaken_for_missing_tools(ollama: OllamaServer) -> None:
    ollama.replies.append(Failure(400, "invalid message format"))
    model = ollama_model(ollama)
    try:
        with pytest.raises(LanguageModelResponseError, match="invalid message format"):
            await model.complete_with_tools(QUESTION, [WEATHER])
    finally:
        await model.aclose()


async def test_openai_offers_tools_and_reads_the_call(openai: OpenAICompatibleServer) -> None:
    openai.replies.append(ToolCalls((("web_search", ARGUMENTS),)))
    model = openai_model(openai)
    try:
        turn = await model.complete_with_tools(QUESTION, [WEATHER], temperature=0.0)
    finally:
        await model.aclose()
    # content null becomes "", the arguments string becomes an object, the id is kept
    assert turn == AssistantTurn("", (ToolCall("web_search", ARGUMENTS, "call_0"),))
    body = openai.requests[0]
    assert body["tools"] == [TOOL_DEFINITION]
    assert "response_format" not in body


async def test_openai_result_answers_the_call_by_its_id(openai: OpenAICompatibleServer) -> None:
    openai.replies.append("Showers in Paris [1]")
    model = openai_model(openai)
    try:
        call = ToolCall("web_search", ARGUMENTS, "call_7")
        turn = await model.complete_with_tools(second_round(call), [WEATHER])
    finally:
        await model.aclose()
    assert turn == AssistantTurn("Showers in Paris [1]")
    messages = openai.requests[0]["messages"]
    function = {"name": "web_search", "arguments": '{"queries": ["Paris weather 2026-11-29"]}'}
    assert messages[2] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "call_7", "type": "function", "function": function}],
    }
    assert messages[3] == {"role": "tool", "content": "[1] results", "tool_call_id": "call_7"}


async def test_openai_broken_arguments_become_empty_and_are_logged(
    openai: OpenAICompatibleServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai.replies.append(ToolCalls((("web_search", '{"queries": ["Paris'),)))
    model = openai_model(openai)
    try:
        with caplog.at_level(logging.WARNING, logger="memory.llm"):
            turn = await model.complete_with_tools(QUESTION, [WEATHER])
    finally:
        await model.aclose()
    assert turn.tool_calls == (ToolCall("web_search", {}, "call_0"),)
    assert '{"queries": ["Paris' in caplog.text


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (400, "registry.ollama.ai/library/gemma3:4b does not support tools"),
        (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
        (500, "tools param requires --jinja flag"),
    ],
)
async def test_openai_servers_refusing_tools_raise_tools_not_supported(
    status: int, message: str
) -> None:
    with OpenAICompatibleServer(model=OPENAI_MODEL, tools_refusal=(status, message)) as server:
        server.replies.append("plain answer")
        model = openai_model(server)
        try:
            with pytest.raises(ToolsNotSupported, match=f"HTTP {status}"):
                await model.complete_with_tools(QUESTION, [WEATHER])
            assert await model.complete(QUESTION) == "plain answer"
        finally:
            await model.aclose()


async def test_openai_other_400_with_tools_stays_a_response_error() -> None:
    refusal = (400, "messages.2.content: field required")
    with OpenAICompatibleServer(model=OPENAI_MODEL, tools_refusal=refusal) as server:
        model = openai_model(server)
        try:
            with pytest.raises(LanguageModelResponseError) as caught:
                await model.complete_with_tools(QUESTION, [WEATHER])
        finally:
            await model.aclose()
    assert not isinstance(caught.value, ToolsNotSupported)


async def test_scripted_double_records_the_tools_and_can_refuse_them() -> None:
    call = ToolCall("web_search", ARGUMENTS)
    model = ScriptedLanguageModel([AssistantTurn("", (call,)), "answer"])
    assert isinstance(model, ToolCallingModel)
    assert await model.complete_with_tools(QUESTION, [WEATHER]) == AssistantTurn("", (call,))
    assert await model.complete_with_tools(QUESTION, [WEATHER]) == AssistantTurn("answer")
    assert [recorded.tools for recorded in model.calls] == [(WEATHER,), (WEATHER,)]
    refusing = ScriptedLanguageModel(["plain"], supports_tools=False)
    with pytest.raises(ToolsNotSupported):
        await refusing.complete_with_tools(QUESTION, [WEATHER])
    assert await refusing.complete(QUESTION) == "plain"
    assert len(refusing.calls) == 2


async def test_scripted_double_refuses_a_tool_call_where_no_tools_were_offered() -> None:
    model = ScriptedLanguageModel([AssistantTurn("", (ToolCall("web_search", {}),))])
    with pytest.raises(AssertionError, match="offered no tools"):
        await model.complete(QUESTION)


async def test_lone_surrogates_in_answers_are_made_valid(
    ollama: OllamaServer, openai: OpenAICompatibleServer
) -> None:
    """An answer whose JSON holds "\\ud800" (a model cut inside an emoji) cannot be stored,
    sent or printed as it is: each backend hands back valid text and arguments."""
    broken = {"queries": ["Paris \ud800 weather"]}
    valid = {"queries": ["Paris \ufffd weather"]}
    ollama.replies += ["Sunny \ud83d\ude00 and \ud800.", ToolCalls((("web_search", broken),))]
    openai.replies += ["Sunny \ud83d\ude00 and \ud800.", ToolCalls((("web_search", broken),))]
    for model in (ollama_model(ollama), openai_model(openai)):
        try:
            assert await model.complete(QUESTION) == "Sunny \U0001f600 and \ufffd."
            turn = await model.complete_with_tools(QUESTION, [WEATHER])
        finally:
            await model.aclose()
        assert [call.arguments for call in turn.tool_calls] == [valid]
