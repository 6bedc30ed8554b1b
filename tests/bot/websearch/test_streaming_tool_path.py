"""Streamed replies with web search through the real core: the tools round runs before the
answer, and a tool call the model writes as text is run and never reaches the stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memory.embedding import Embedder
from tests.bot.core.test_streaming import bot_turns, streamed
from tests.bot.websearch.web_bot import TIMEANDDATE, WebBot, open_web_bot
from tests.servers.searxng_server import SearxngShapedServer

CALL_AS_TEXT = '{"name": "web_search", "arguments": {"queries": ["weather in Paris today"]}}'


@pytest.fixture
async def web_bot(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer
) -> AsyncIterator[WebBot]:
    opened = await open_web_bot(tmp_path, embedder, searxng, supports_tools=True)
    yield opened
    await opened.harness.app.aclose()


@pytest.mark.parametrize(
    "first_round",
    [
        CALL_AS_TEXT,
        f"Let me look that up. <tool_call>\n{CALL_AS_TEXT}\n</tool_call>",
        f"```json\n{CALL_AS_TEXT}\n```",
        'web_search(queries=["weather in Paris today"])',
    ],
)
async def test_a_tool_call_written_as_text_is_run_and_never_streamed(
    web_bot: WebBot, first_round: str
) -> None:
    answer = f"It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}"
    web_bot.mind.replies += [first_round, answer]
    replies, stream = await streamed(web_bot.harness, "what's the weather in Paris?")
    assert web_bot.searxng.queries == ["weather in Paris today"]
    assert replies[0].text.startswith(answer)
    assert stream.texts and stream.texts[-1] in answer
    for text in stream.texts:
        for leak in ("web_search", "{", "tool_call", "```", "queries"):
            assert leak not in text, (leak, text)
    assert await bot_turns(web_bot.harness) == [answer]


async def test_search_command_answer_streams(web_bot: WebBot) -> None:
    answer = f"Paris today: 8 °C and clouds, says timeanddate [1] {TIMEANDDATE}"
    web_bot.mind.replies.append(answer)
    replies, stream = await streamed(web_bot.harness, "!search weather in Paris")
    assert replies[0].text.startswith(answer)
    assert len(stream.texts) > 3 and all(answer.startswith(text) for text in stream.texts)
