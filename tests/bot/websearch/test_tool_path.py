"""Web search end to end through the conversation core (issue 8), with a model that takes
tools: the reply call offers ``web_search``, and the model writes the queries in its call.

The parts are described in ``web_bot.py``; the fallback path is in ``test_through_core.py``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.websearch.advisor import UNAVAILABLE_NOTICE
from bot.websearch.tool import TOOL_NAME, WEB_SEARCH_TOOL
from memory.embedding import Embedder
from memory.llm import AssistantTurn, LanguageModelResponseError, RecordedCall, ToolCall
from tests.bot.core.harness import fact, reply_calls
from tests.bot.websearch.web_bot import (
    METEOFRANCE,
    TIMEANDDATE,
    WIKIPEDIA_AMELIE,
    WebBot,
    assert_write_path_saw_only_user_words,
    open_web_bot,
    search,
    search_decision_calls,
    web_search_call,
)
from tests.servers.searxng_server import SearxngShapedServer


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer
) -> AsyncIterator[WebBot]:
    opened = await open_web_bot(tmp_path, embedder, searxng, supports_tools=True)
    yield opened
    await opened.harness.app.aclose()


def tool_offering_calls(bot: WebBot) -> list[RecordedCall]:
    return [call for call in bot.llm.calls if call.tools]


async def test_weather_follow_up_calls_the_tool_with_paris_and_tomorrow(bot: WebBot) -> None:
    bot.mind.tool_turns["what's the weather in Paris?"] = web_search_call("weather in Paris today")
    bot.mind.tool_turns["and tomorrow?"] = web_search_call("Paris weather forecast 2026-11-30")
    bot.mind.replies += [
        f"It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}",
        f"Tomorrow brings showers in Paris, 4 to 9 °C [1] {METEOFRANCE}",
    ]

    first = await bot.say("alice", "what's the weather in Paris?")
    second = await bot.say("alice", "and tomorrow?")

    # The query strings SearXNG received carry the context of the follow-up...
    assert bot.searxng.queries == ["weather in Paris today", "Paris weather forecast 2026-11-30"]
    # ...because the call that wrote them held the earlier turns, today's date and the rule.
    calls = tool_offering_calls(bot)
    assert len(calls) == 4  # per message: the call that searched, the call that answered
    follow_up = calls[2]
    assert follow_up.tools == (WEB_SEARCH_TOOL,)
    assert [m.content for m in follow_up.messages[1:] if m.role != "system"] == [
        "what's the weather in Paris?",
        f"It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}",
        "and tomorrow?",
    ]
    system = follow_up.system_text
    assert "Today is Sunday, 2026-11-29." in system
    assert "(tomorrow is 2026-11-30)" in system
    # The results went back as the tool's result, answering the model's own call.
    answer_call = calls[3]
    assistant, result = answer_call.messages[-2:]
    assert assistant.role == "assistant"
    assert assistant.tool_calls == web_search_call("Paris weather forecast 2026-11-30").tool_calls
    assert result.role == "tool"
    assert result.tool_call == assistant.tool_calls[0]
    assert f"URL: {METEOFRANCE}" in result.content
    assert "averses l'après-midi" in result.content
    assert "cite every source you use by its number and URL" in result.content
    # The replies cite the URLs; no decision call was made, no notice was needed.
    assert first.endswith(TIMEANDDATE)
    assert second == f"Tomorrow brings showers in Paris, 4 to 9 °C [1] {METEOFRANCE}"
    assert search_decision_calls(bot.llm) == []
    # Nothing from the web reached the write path or the store.
    # Questions state nothing: the pre-check spares them extraction altogether.
    assert_write_path_saw_only_user_words(bot, [])
    assert await bot.active_facts() == []


async def test_film_follow_up_searches_the_film_and_a_statement_costs_one_call(
    bot: WebBot,
) -> None:
    watched = "I watched Amélie last night, the 2001 one with Audrey Tautou."
    bot.mind.facts[watched] = [
        fact("I watched Amélie last night, the 2001 one", "hobby", when="last night")
    ]
    bot.mind.tool_turns["who directed it?"] = web_search_call("Amélie 2001 film director")
    bot.mind.replies += [
        "Lovely! Did you like it?",
        f"Amélie was directed by Jean-Pierre Jeunet [1] {WIKIPEDIA_AMELIE}",
    ]

    await bot.say("alice", watched)
    assert len(reply_calls(bot.llm)) == 1  # answered directly: one call, no search
    answer = await bot.say("alice", "who directed it?")

    assert bot.searxng.queries == ["Amélie 2001 film director"]
    searched = tool_offering_calls(bot)[1]
    assert searched.messages[1].content == watched
    result = reply_calls(bot.llm)[-1].messages[-1]
    assert f"[1] Amélie\n    URL: {WIKIPEDIA_AMELIE}" in result.content
    assert "Director: Jean-Pierre Jeunet" in result.content
    assert answer.endswith(WIKIPEDIA_AMELIE)
    assert_write_path_saw_only_user_words(bot, [watched])
    assert await bot.active_facts() == ["I watched Amélie last night (2026-11-28), the 2001 one"]


async def test_forced_search_needs_no_decision_and_offers_no_tool(bot: WebBot) -> None:
    bot.mind.replies.append(f"Right now: 8 °C and passing clouds [1] {TIMEANDDATE}")

    answer = await bot.say("alice", "!search paris weather")

    assert bot.searxng.queries == ["paris weather"]
    assert tool_offering_calls(bot) == []
    assert search_decision_calls(bot.llm) == []
    assert f"URL: {TIMEANDDATE}" in reply_calls(bot.llm)[-1].system_text
    assert answer.endswith(TIMEANDDATE)


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (ToolCall(TOOL_NAME, {"query": "Paris weather"}), "queries: Field required"),
        (ToolCall(TOOL_NAME, {"queries": []}), "queries: List should have at least 1 item"),
        (ToolCall(TOOL_NAME, {"queries": [3]}), "queries.0: Input should be a valid string"),
        (ToolCall(TOOL_NAME, {}), "queries: Field required"),
        (ToolCall("get_weather", {"city": "Paris"}), "there is no tool 'get_weather'"),
    ],
)
async def test_a_tool_call_that_cannot_run_is_logged_and_answered_without_the_web(
    bot: WebBot, caplog: pytest.LogCaptureFixture, call: ToolCall, problem: str
) -> None:
    bot.mind.tool_turns["what's the weather in Paris?"] = AssistantTurn("", (call,))
    bot.mind.replies.append("I can't look that up right now, but Paris is mild in November.")

    with caplog.at_level(logging.WARNING, logger="bot.core"):
        answer = await bot.say("alice", "what's the weather in Paris?")

    assert answer == "I can't look that up right now, but Paris is mild in November."
    assert bot.searxng.queries == []
    # The answer came from a plain call: no tool offered, no results, no tool messages.
    last = reply_calls(bot.llm)[-1]
    assert last.tools == ()
    assert [m.role for m in last.messages] == ["system", "user"]
    assert "web_search tool" not in last.system_text
    assert "web search skipped: the model's tool call cannot be run" in caplog.text
    assert problem in caplog.text


async def test_a_second_tool_call_in_the_answer_round_is_not_run(
    bot: WebBot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.mind.tool_turns["and tomorrow?"] = web_search_call("Paris weather forecast 2026-11-30")
    bot.mind.answer_turns.append(web_search_call("Paris weather forecast 2026-12-01"))
    bot.mind.replies.append(f"Showers tomorrow in Paris [1] {METEOFRANCE}")

    with caplog.at_level(logging.WARNING, logger="bot.core"):
        answer = await bot.say("alice", "and tomorrow?")

    # One search only; the answer was then asked for without tools, the results in the
    # system prompt: three calls in all, the bound.
    assert bot.searxng.queries == ["Paris weather forecast 2026-11-30"]
    assert len(reply_calls(bot.llm)) == 3
    last = reply_calls(bot.llm)[-1]
    assert last.tools == ()
    assert f"URL: {METEOFRANCE}" in last.system_text
    assert answer == f"Showers tomorrow in Paris [1] {METEOFRANCE}"
    assert "called web_search again in the answer round; not run" in caplog.text


async def test_text_beside_a_second_tool_call_is_the_answer(bot: WebBot) -> None:
    bot.mind.tool_turns["and tomorrow?"] = web_search_call("Paris weather forecast 2026-11-30")
    repeated = web_search_call("more Paris weather").tool_calls
    bot.mind.answer_turns.append(AssistantTurn(f"Showers [1] {METEOFRANCE}", repeated))

    answer = await bot.say("alice", "and tomorrow?")

    assert answer == f"Showers [1] {METEOFRANCE}"
    assert bot.searxng.queries == ["Paris weather forecast 2026-11-30"]
    assert len(reply_calls(bot.llm)) == 2


async def test_parallel_calls_share_one_search_and_each_gets_a_result(bot: WebBot) -> None:
    calls = (
        ToolCall(TOOL_NAME, {"queries": ["weather in Paris today"]}, "a"),
        ToolCall(TOOL_NAME, {"queries": "Amélie 2001 film director", "time_range": "year"}, "b"),
        ToolCall("calculator", {"expression": "1+1"}, "c"),
    )
    bot.mind.tool_turns["Paris weather, and who directed Amélie?"] = AssistantTurn("", calls)

    await bot.say("alice", "Paris weather, and who directed Amélie?")

    # The two searches run at once: they may reach the server in either order.
    assert sorted(bot.searxng.queries) == ["Amélie 2001 film director", "weather in Paris today"]
    assert {r.parameters.get("time_range") for r in bot.searxng.requests} == {"year"}
    results = reply_calls(bot.llm)[-1].messages[-3:]
    assert [m.tool_call for m in results] == list(calls)
    assert TIMEANDDATE in results[0].content and WIKIPEDIA_AMELIE in results[0].content
    assert results[1].content.startswith("Searched together with the first web_search call")
    assert results[2].content == "Not run: there is no tool 'calculator', only 'web_search'."


@pytest.mark.parametrize(
    ("searxng_mode", "operator_line"),
    [
        ("forbidden", "add `json` to `search.formats` in SearXNG's settings.yml"),
        ("slow", "did not answer within 0.5 s"),
    ],
)
async def test_searxng_failure_on_the_tool_path_answers_without_the_web_and_says_so(
    bot: WebBot, caplog: pytest.LogCaptureFixture, operator_line: str
) -> None:
    bot.mind.tool_turns["what's the weather in Paris?"] = web_search_call("weather in Paris")
    bot.mind.replies.append("I think it is mild in Paris this time of year.")

    with caplog.at_level(logging.WARNING, logger="bot.websearch"):
        answer = await bot.say("alice", "what's the weather in Paris?")

    assert answer == f"I think it is mild in Paris this time of year.\n\n{UNAVAILABLE_NOTICE}"
    result = reply_calls(bot.llm)[-1].messages[-1]
    assert result.role == "tool"
    assert result.content.startswith("The web search gave no results (Web search is not")
    assert "cite no sources" in result.content
    assert operator_line in caplog.text


async def test_nothing_found_on_the_tool_path_is_said_after_the_answer(bot: WebBot) -> None:
    # A model that dropped the context: the web has nothing for it, and the person is told.
    bot.mind.tool_turns["and tomorrow?"] = web_search_call("weather tomorrow")
    bot.mind.replies.append("I could not find a forecast.")

    answer = await bot.say("alice", "and tomorrow?")

    notice = "I searched the web for “weather tomorrow” but found nothing."
    assert answer == f"I could not find a forecast.\n\n{notice}"
    assert "Web search results" not in reply_calls(bot.llm)[-1].prompt_text


async def test_a_model_without_tools_falls_back_to_the_decision_once_logged(
    tmp_path: Path,
    embedder: Embedder,
    searxng: SearxngShapedServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    bot = await open_web_bot(tmp_path, embedder, searxng, supports_tools=False)
    bot.mind.searches += [
        search("weather in Paris today"),
        search("Paris weather forecast 2026-11-30"),
    ]
    try:
        with caplog.at_level(logging.WARNING, logger="bot.core"):
            await bot.say("alice", "what's the weather in Paris?")
            await bot.say("alice", "and tomorrow?")
    finally:
        await bot.harness.app.aclose()

    # Tools were offered once, refused, and not offered again for this model.
    assert len(tool_offering_calls(bot)) == 1
    assert len(search_decision_calls(bot.llm)) == 2
    assert bot.searxng.queries == ["weather in Paris today", "Paris weather forecast 2026-11-30"]
    refusals = [r for r in caplog.records if "does not take tools" in r.getMessage()]
    assert len(refusals) == 1
    assert "scripted does not support tools" in refusals[0].getMessage()


async def test_an_unrecognised_error_to_the_tools_call_falls_back_to_the_decision(
    bot: WebBot, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse_in_other_words(*arguments: object, **options: object) -> AssistantTurn:
        raise LanguageModelResponseError("HTTP 400: this template cannot render 'tools'")

    monkeypatch.setattr(bot.llm, "complete_with_tools", refuse_in_other_words)
    bot.mind.searches += [
        search("weather in Paris today"),
        search("Paris weather forecast 2026-11-30"),
    ]
    with caplog.at_level(logging.WARNING, logger="bot.core"):
        first = await bot.say("alice", "what's the weather in Paris?")
        await bot.say("alice", "and tomorrow?")

    assert first != ""
    assert len(search_decision_calls(bot.llm)) == 2
    assert bot.searxng.queries == ["weather in Paris today", "Paris weather forecast 2026-11-30"]
    refusals = [r for r in caplog.records if "when offered tools" in r.getMessage()]
    assert len(refusals) == 1
