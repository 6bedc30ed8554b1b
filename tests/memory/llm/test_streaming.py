"""Streamed replies from both backends against real HTTP servers on 127.0.0.1, and the
scripted double's stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory.llm import (
    AnswerCut,
    AssistantTurn,
    ChatMessage,
    LanguageModelUnavailable,
    ModelNotFound,
    ScriptedLanguageModel,
    StreamingModel,
    ToolCall,
    ToolSpec,
)
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from memory.llm.scripted import BrokenStream
from memory.llm.text_tool_calls import shown_while_streaming
from tests.servers.ollama_server import Cut, OllamaServer, ToolCalls
from tests.servers.openai_server import Broken, OpenAICompatibleServer

MESSAGES = [ChatMessage("system", "You are terse."), ChatMessage("user", "Say hi")]
SEARCH = ToolSpec("web_search", "Search the web", {"type": "object", "properties": {}})
ANSWER = "Hello there, Alice: the weather in Paris is mild today."


class Pieces:
    """The pieces a stream handed on, in order."""

    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, piece: str) -> None:
        self.pieces.append(piece)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


@pytest.fixture
async def openai() -> AsyncIterator[tuple[OpenAICompatibleServer, OpenAILanguageModel]]:
    with OpenAICompatibleServer(model="qwen") as server:
        model = OpenAILanguageModel("qwen", base_url=server.base_url)
        yield server, model
        await model.aclose()


@pytest.fixture
async def ollama() -> AsyncIterator[tuple[OllamaServer, OllamaLanguageModel]]:
    with OllamaServer(models=("qwen",)) as server:
        model = OllamaLanguageModel("qwen", host=server.base_url, retry_pause_seconds=0.01)
        yield server, model
        await model.aclose()


def test_every_model_streams() -> None:
    assert isinstance(OpenAILanguageModel("m", base_url="http://127.0.0.1:1/v1"), StreamingModel)
    assert isinstance(OllamaLanguageModel("m"), StreamingModel)
    assert isinstance(ScriptedLanguageModel(), StreamingModel)


async def test_openai_streams_the_text_in_pieces(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, model = openai
    server.replies.append(ANSWER)
    pieces = Pieces()
    turn = await model.stream(MESSAGES, pieces, temperature=0.2)
    assert turn == AssistantTurn(ANSWER)
    assert len(pieces.pieces) > 5 and pieces.text == ANSWER
    body = server.requests[0]
    assert body["stream"] is True and body["max_tokens"] == 1024 and "tools" not in body


async def test_openai_streamed_tool_call_is_a_call_and_never_text(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, model = openai
    server.replies.append(ToolCalls((("web_search", {"queries": ["paris weather"]}),)))
    pieces = Pieces()
    turn = await model.stream(MESSAGES, pieces, tools=[SEARCH])
    assert turn.tool_calls == (ToolCall("web_search", {"queries": ["paris weather"]}, "call_0"),)
    assert pieces.text == "" and turn.text == ""
    assert server.requests[0]["tools"][0]["function"]["name"] == "web_search"


async def test_openai_call_written_as_text_is_read_as_a_call(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, model = openai
    server.replies.append('{"name": "web_search", "arguments": {"queries": ["paris"]}}')
    turn = await model.stream(MESSAGES, Pieces(), tools=[SEARCH])
    assert [call.name for call in turn.tool_calls] == ["web_search"] and turn.text == ""


async def test_openai_cut_stream_raises_with_the_text(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, model = openai
    server.replies.append(Cut("A long answer that"))
    pieces = Pieces()
    with pytest.raises(AnswerCut) as cut:
        await model.stream(MESSAGES, pieces)
    assert cut.value.text == "A long answer that" == pieces.text


async def test_openai_stream_broken_midway_is_unavailable_after_its_text(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, model = openai
    server.replies.append(Broken("The first half of"))
    pieces = Pieces()
    with pytest.raises(LanguageModelUnavailable, match="before the answer was complete"):
        await model.stream(MESSAGES, pieces)
    assert pieces.text == "The first half of"


async def test_openai_stream_error_answer_is_translated(
    openai: tuple[OpenAICompatibleServer, OpenAILanguageModel],
) -> None:
    server, _ = openai
    model = OpenAILanguageModel("other", base_url=server.base_url)
    try:
        with pytest.raises(ModelNotFound):
            await model.stream(MESSAGES, Pieces())
    finally:
        await model.aclose()


async def test_openai_stream_unreachable() -> None:
    model = OpenAILanguageModel("m", base_url="http://127.0.0.1:9/v1")
    try:
        with pytest.raises(LanguageModelUnavailable, match="not reachable"):
            await model.stream(MESSAGES, Pieces())
    finally:
        await model.aclose()


async def test_ollama_streams_the_text_in_pieces(
    ollama: tuple[OllamaServer, OllamaLanguageModel],
) -> None:
    server, model = ollama
    server.replies.append(ANSWER)
    pieces = Pieces()
    turn = await model.stream(MESSAGES, pieces)
    assert turn == AssistantTurn(ANSWER) and pieces.text == ANSWER and len(pieces.pieces) > 5
    body = server.requests[0]
    assert body["stream"] is True and body["options"]["num_predict"] == 1024


async def test_ollama_streamed_tool_call(ollama: tuple[OllamaServer, OllamaLanguageModel]) -> None:
    server, model = ollama
    server.replies.append(ToolCalls((("web_search", {"queries": ["paris"]}),)))
    pieces = Pieces()
    turn = await model.stream(MESSAGES, pieces, tools=[SEARCH])
    assert turn.tool_calls == (ToolCall("web_search", {"queries": ["paris"]}),)
    assert pieces.text == ""


async def test_ollama_cut_and_missing_model(
    ollama: tuple[OllamaServer, OllamaLanguageModel],
) -> None:
    server, model = ollama
    server.replies.append(Cut("So far"))
    with pytest.raises(AnswerCut) as cut:
        await model.stream(MESSAGES, Pieces())
    assert cut.value.text == "So far"
    other = OllamaLanguageModel("absent", host=server.base_url)
    try:
        with pytest.raises(ModelNotFound):
            await other.stream(MESSAGES, Pieces())
    finally:
        await other.aclose()


async def test_scripted_stream_hands_on_text_and_breaks_as_scripted() -> None:
    model = ScriptedLanguageModel(
        [ANSWER, BrokenStream("Half an", LanguageModelUnavailable("gone"))]
    )
    pieces = Pieces()
    assert (await model.stream(MESSAGES, pieces)).text == ANSWER
    assert pieces.text == ANSWER and len(pieces.pieces) > 5
    broken = Pieces()
    with pytest.raises(LanguageModelUnavailable):
        await model.stream(MESSAGES, broken)
    assert broken.text == "Half an"


CALL = '{"name": "web_search", "arguments": {"queries": ["a } b", "weather in Paris"]}}'


@pytest.mark.parametrize(
    "written",
    [
        CALL,
        f"Let me look. <tool_call>\n{CALL}\n</tool_call>",
        f"```json\n{CALL}\n```",
        f"[TOOL_CALLS] [{CALL}]",
        f"<|python_tag|>{CALL}",
        f"functools[{CALL}]",
        'web_search(queries=["weather in Paris"])',
        '[web_search(queries=["weather in Paris"])]',
        '{"function": {"name": "web_search", "arguments": "{\\"queries\\": [\\"x\\"]}"}}',
    ],
)
def test_no_beginning_of_a_call_written_as_text_is_ever_shown(written: str) -> None:
    for end in range(len(written) + 1):
        shown = shown_while_streaming(written[:end], ["web_search"])
        assert shown in ("", "Let", "Let me", "Let me look."), (written[:end], shown)


def test_prose_streams_word_by_word() -> None:
    prose = "It is 8 °C (cloudy) in Paris [1], so take a coat :( and see <https://x.org> now."
    shown = [shown_while_streaming(prose[:end], ["web_search"]) for end in range(len(prose))]
    assert shown[-1] == prose[: prose.rindex(" ")]
    assert len(set(shown)) > 12
