"""Token budgets, cut answers, a server of the other provider, and tool calls written as
text, through both backends against real HTTP servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory.llm import (
    AnswerCut,
    CallKind,
    ChatMessage,
    ModelNotFound,
    TokenBudgets,
    ToolCall,
    ToolSpec,
    WrongProvider,
)
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from tests.servers.ollama_server import Cut, OllamaServer
from tests.servers.openai_server import OpenAICompatibleServer

MESSAGES = [ChatMessage("system", "You help."), ChatMessage("user", "Tell me a long story")]
BUDGETS = TokenBudgets(reply=300, extraction=200, decision=100, search_decision=50, judge=60)
SEARCH = ToolSpec(
    "web_search",
    "Search the web.",
    {"type": "object", "properties": {"queries": {"type": "array"}}, "required": ["queries"]},
)
# The shapes small models write calls in, seen with Qwen2.5 0.5B (bare JSON, tags) and
# documented for Mistral, Llama 3.1 and pythonic tool calling.
WRITTEN_CALLS = [
    '{"name": "web_search", "arguments": {"queries": ["Paris weather"]}}',
    '<tool_call>\n{"name": "web_search", "arguments": {"queries": ["Paris weather"]}}\n'
    "</tool_call>",
    '```json\n{"name": "web_search", "parameters": {"queries": ["Paris weather"]}}\n```',
    '[TOOL_CALLS] [{"name": "web_search", "arguments": {"queries": ["Paris weather"]}}]',
    '<|python_tag|>{"name": "web_search", "parameters": {"queries": ["Paris weather"]}}',
    '{"type": "function", "function": {"name": "web_search", "arguments": '
    '"{\\"queries\\": [\\"Paris weather\\"]}"}}',
    '{"web_search": {"queries": ["Paris weather"]}}',
    '[web_search(queries=["Paris weather"])]',
]


@pytest.fixture
def openai() -> Iterator[OpenAICompatibleServer]:
    with OpenAICompatibleServer(model="m") as server:
        yield server


@pytest.fixture
def ollama() -> Iterator[OllamaServer]:
    with OllamaServer(models=("m",)) as server:
        yield server


def openai_model(server: OpenAICompatibleServer, seed: int | None = None) -> OpenAILanguageModel:
    return OpenAILanguageModel("m", base_url=server.base_url, budgets=BUDGETS, seed=seed)


def ollama_model(server: OllamaServer, seed: int | None = None) -> OllamaLanguageModel:
    return OllamaLanguageModel("m", host=server.base_url, budgets=BUDGETS, seed=seed)


@pytest.mark.parametrize(
    ("kind", "budget"),
    [
        (CallKind.REPLY, 300),
        (CallKind.EXTRACTION, 200),
        (CallKind.DECISION, 100),
        (CallKind.SEARCH_DECISION, 50),
        (CallKind.JUDGE, 60),
    ],
)
async def test_each_kind_sends_its_budget(
    openai: OpenAICompatibleServer, ollama: OllamaServer, kind: CallKind, budget: int
) -> None:
    openai.fallback = ollama.fallback = "ok"
    first, second = openai_model(openai, seed=7), ollama_model(ollama, seed=7)
    try:
        assert await first.complete(MESSAGES, kind=kind) == "ok"
        assert await second.complete(MESSAGES, kind=kind) == "ok"
    finally:
        await first.aclose()
        await second.aclose()
    assert (openai.requests[0]["max_tokens"], openai.requests[0]["seed"]) == (budget, 7)
    assert ollama.requests[0]["options"] == {"num_predict": budget, "seed": 7}


async def test_a_cut_answer_is_raised_with_its_text(
    openai: OpenAICompatibleServer, ollama: OllamaServer
) -> None:
    """finish_reason / done_reason "length": never a timeout, and the text so far is kept."""
    openai.replies.append(Cut("Once upon a time there"))
    ollama.replies.append(Cut('{"facts": [{"text": "I have'))
    first, second = openai_model(openai), ollama_model(ollama)
    try:
        with pytest.raises(AnswerCut) as openai_cut:
            await first.complete(MESSAGES)
        with pytest.raises(AnswerCut) as ollama_cut:
            await second.complete(MESSAGES, kind=CallKind.EXTRACTION, json_schema={})
    finally:
        await first.aclose()
        await second.aclose()
    assert (openai_cut.value.text, openai_cut.value.budget) == ("Once upon a time there", 300)
    assert (ollama_cut.value.kind, ollama_cut.value.budget) == (CallKind.EXTRACTION, 200)
    assert ollama_cut.value.text == '{"facts": [{"text": "I have'
    assert "llm.max_tokens_extraction" in str(ollama_cut.value)


async def test_ollama_provider_at_an_openai_server_is_named_with_the_fix(
    openai: OpenAICompatibleServer,
) -> None:
    """The 404 on /api/chat was taken for a missing model ("run `ollama pull`")."""
    model = OllamaLanguageModel("m", host=openai.origin)
    try:
        with pytest.raises(WrongProvider) as raised:
            await model.complete(MESSAGES)
    finally:
        await model.aclose()
    assert "is not Ollama" in str(raised.value)
    assert 'llm.provider = "openai"' in str(raised.value) and "/v1" in str(raised.value)
    assert "ollama pull" not in str(raised.value)


async def test_openai_provider_at_ollama_is_named_with_the_fix(ollama: OllamaServer) -> None:
    model = OpenAILanguageModel("m", base_url=ollama.base_url)
    try:
        with pytest.raises(WrongProvider, match=r'llm.provider = "ollama"'):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()


async def test_ollamas_own_missing_model_is_still_that(ollama: OllamaServer) -> None:
    model = OllamaLanguageModel("not-pulled", host=ollama.base_url)
    try:
        with pytest.raises(ModelNotFound, match="ollama pull not-pulled"):
            await model.complete(MESSAGES)
    finally:
        await model.aclose()


@pytest.mark.parametrize("written", WRITTEN_CALLS)
async def test_a_call_written_as_text_comes_back_as_a_call(
    openai: OpenAICompatibleServer, ollama: OllamaServer, written: str
) -> None:
    openai.replies.append(written)
    ollama.replies.append(written)
    first, second = openai_model(openai), ollama_model(ollama)
    try:
        turns = [
            await first.complete_with_tools(MESSAGES, [SEARCH]),
            await second.complete_with_tools(MESSAGES, [SEARCH]),
        ]
    finally:
        await first.aclose()
        await second.aclose()
    for turn in turns:
        assert turn.text == ""
        assert turn.tool_calls == (
            ToolCall("web_search", {"queries": ["Paris weather"]}, "text_call_0"),
        )


async def test_text_naming_no_offered_tool_stays_text(openai: OpenAICompatibleServer) -> None:
    answer = 'A person record looks like {"name": "Bob", "age": 3}.'
    openai.replies.append(answer)
    model = openai_model(openai)
    try:
        turn = await model.complete_with_tools(MESSAGES, [SEARCH])
    finally:
        await model.aclose()
    assert (turn.text, turn.tool_calls) == (answer, ())


async def test_a_cut_tools_round_keeps_the_words_before_a_call(
    openai: OpenAICompatibleServer,
) -> None:
    openai.replies.append(Cut('Let me look. {"name": "web_search", "arguments": {"quer'))
    model = openai_model(openai)
    try:
        with pytest.raises(AnswerCut) as raised:
            await model.complete_with_tools(MESSAGES, [SEARCH])
    finally:
        await model.aclose()
    assert raised.value.kind is CallKind.REPLY
    assert raised.value.text.startswith("Let me look.")


async def test_a_written_call_of_a_tool_never_offered_is_a_call_not_text(
    openai: OpenAICompatibleServer,
) -> None:
    """Seen with the 0.5B model: it called a "weather" tool it was never offered."""
    openai.replies.append('{"name": "weather", "arguments": {"city": "Paris"}}')
    model = openai_model(openai)
    try:
        turn = await model.complete_with_tools(MESSAGES, [SEARCH])
    finally:
        await model.aclose()
    assert turn.text == ""
    assert turn.tool_calls == (ToolCall("weather", {"city": "Paris"}, "text_call_0"),)
