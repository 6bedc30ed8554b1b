"""Streaming against a REAL server and model: llama.cpp's ``llama-server`` with
Qwen2.5-Coder-0.5B-Instruct from ``../shared/llm``.

Plumbing, never the tiny model's judgement: the server's event stream is read piece by piece
into the same turn a call without streaming gives, a cut stream is raised as cut, and
through the replier with web search offered (the model writes its calls as text) no
beginning of a call ever reaches the stream, while the answer grows on it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from bot.core.replying import CUT_NOTE, Replier
from bot.websearch.base import WebContext
from bot.websearch.fixed import FixedWebSearchAdvisor
from bot.websearch.tool import WEB_SEARCH_TOOL
from memory.llm import AnswerCut, ChatMessage, TokenBudgets
from memory.llm.openai_backend import OpenAILanguageModel
from tests.servers.llama import MODEL, LlamaServer
from tests.test_real_llm import BUDGETS, asking, started

pytestmark = pytest.mark.real_llm

LEAKS = ('"name"', '"arguments"', "web_search", "<tool_call>", "```json", "{")


class Pieces:
    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, piece: str) -> None:
        self.pieces.append(piece)


class RecordingStream:
    """Test double for an adapter's answer stream: records every text it was given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def grow(self, text: str) -> None:
        self.texts.append(text)


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    yield from started()


@pytest.fixture
async def model(llama: LlamaServer) -> AsyncIterator[OpenAILanguageModel]:
    opened = OpenAILanguageModel(
        MODEL, base_url=llama.base_url, budgets=BUDGETS, seed=0, timeout=600
    )
    yield opened
    await opened.aclose()


async def test_the_real_stream_comes_in_pieces_that_make_the_answer(
    model: OpenAILanguageModel,
) -> None:
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "Name three fruits.")]
    pieces = Pieces()
    turn = await model.stream(messages, pieces, temperature=0)
    assert len(pieces.pieces) > 3
    assert "".join(pieces.pieces) == turn.text and turn.text.strip()
    assert not turn.tool_calls


async def test_a_real_stream_cut_at_its_budget_is_raised_with_its_text(llama: LlamaServer) -> None:
    model = OpenAILanguageModel(
        MODEL, base_url=llama.base_url, budgets=TokenBudgets(reply=12), timeout=600
    )
    pieces = Pieces()
    try:
        with pytest.raises(AnswerCut) as cut:
            # Greedy, as the reply below: sampled, the model now and then answers in a line.
            await model.stream(
                [ChatMessage("user", "Tell me a long story about a dragon.")], pieces, temperature=0
            )
        reply = await Replier(model, None, temperature=0).reply(
            asking("Tell me a long story about a dragon."),
            forced_query=None,
            stream=RecordingStream(),
        )
    finally:
        await model.aclose()
    assert cut.value.text == "".join(pieces.pieces) and cut.value.text
    assert reply.notice == CUT_NOTE and reply.text


@pytest.mark.parametrize(
    "question",
    ["What is the weather in Paris tomorrow?", "Search the web: who won the last World Cup?"],
)
async def test_no_tool_call_is_ever_streamed_and_the_answer_grows(
    model: OpenAILanguageModel, question: str
) -> None:
    web = FixedWebSearchAdvisor(WebContext(("Paris weather",), "[1] Paris: rain, 9 °C"))
    stream = RecordingStream()
    reply = await Replier(model, web, temperature=0).reply(
        asking(question), forced_query=None, stream=stream
    )
    for text in stream.texts:
        for leak in LEAKS:
            assert leak not in text, (leak, text)
    assert reply.text
    if stream.texts:
        # The last text shown is the start of the answer sent (which holds no call either).
        assert reply.text.startswith(stream.texts[-1])


async def test_the_streamed_tools_round_offers_the_tool(model: OpenAILanguageModel) -> None:
    pieces = Pieces()
    messages = [ChatMessage("user", "What is the weather in Paris today? Use the tool.")]
    turn = await model.stream(messages, pieces, tools=[WEB_SEARCH_TOOL], temperature=0)
    # A call, structured or written as text, is read as a call; text is text.
    assert turn.tool_calls or turn.text.strip()
