"""Web search end to end through the conversation core (issue 8), with a model that does
not take tools: the fallback path, where the advisor's JSON decision call writes the queries.

The tool path is in ``test_tool_path.py``; the parts are described in ``web_bot.py``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.websearch.advisor import UNAVAILABLE_NOTICE
from memory.embedding import Embedder
from memory.records import FactStatus
from tests.bot.core.harness import extraction_calls, fact, open_harness, reply_calls
from tests.bot.websearch.web_bot import (
    METEOFRANCE,
    TIMEANDDATE,
    WIKIPEDIA_AMELIE,
    WebBot,
    WebMind,
    assert_write_path_saw_only_user_words,
    config_for,
    open_web_bot,
    search,
    search_decision_calls,
)
from tests.servers.searxng_server import SearxngShapedServer


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer
) -> AsyncIterator[WebBot]:
    opened = await open_web_bot(tmp_path, embedder, searxng, supports_tools=False)
    yield opened
    await opened.harness.app.aclose()


async def test_weather_follow_up_searches_paris_tomorrow_and_cites_the_source(
    bot: WebBot,
) -> None:
    bot.mind.searches += [
        search("weather in Paris today"),
        search("Paris weather forecast 2026-11-30"),
    ]
    bot.mind.replies += [
        f"It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}",
        f"Tomorrow brings showers in Paris, 4 to 9 °C [1] {METEOFRANCE}",
    ]

    first = await bot.say("alice", "what's the weather in Paris?")
    second = await bot.say("alice", "and tomorrow?")

    # The query strings SearXNG received carry the context of the follow-up.
    assert bot.searxng.queries == ["weather in Paris today", "Paris weather forecast 2026-11-30"]
    # ...because the decision for "and tomorrow?" was shown the earlier turns and the date,
    # read back from the store by the core.
    follow_up = search_decision_calls(bot.llm)[1].prompt_text
    assert "Alice: what's the weather in Paris?" in follow_up
    assert f"assistant: It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}" in follow_up
    assert "Today is 2026-11-29" in follow_up
    assert follow_up.endswith("Newest message:\nand tomorrow?")
    # The results reached the answer's prompt, beside the conversation history.
    answer_call = reply_calls(bot.llm)[-1]
    system = answer_call.system_text
    assert f"URL: {METEOFRANCE}" in system
    assert "averses l'après-midi" in system
    assert "cite every source you use by its number and URL" in system
    assert [m.content for m in answer_call.messages[1:] if m.role != "system"] == [
        "what's the weather in Paris?",
        f"It's 8 °C with passing clouds in Paris [1] {TIMEANDDATE}",
        "and tomorrow?",
    ]
    # The reply cites the URLs, and no notice was needed.
    assert first.endswith(TIMEANDDATE)
    assert second == f"Tomorrow brings showers in Paris, 4 to 9 °C [1] {METEOFRANCE}"
    # Nothing from the web reached the write path or the store.
    # Questions state nothing: the pre-check spares them extraction altogether.
    assert_write_path_saw_only_user_words(bot, [])
    assert await bot.active_facts() == []


async def test_film_follow_up_searches_the_film_and_only_the_persons_words_are_learned(
    bot: WebBot,
) -> None:
    watched = "I watched Amélie last night, the 2001 one with Audrey Tautou."
    bot.mind.facts[watched] = [
        fact("I watched Amélie last night, the 2001 one", "hobby", when="last night")
    ]
    bot.mind.searches.append(search("Amélie 2001 film director"))
    bot.mind.replies += [
        "Lovely! Did you like it?",
        f"Amélie was directed by Jean-Pierre Jeunet [1] {WIKIPEDIA_AMELIE}",
    ]

    await bot.say("alice", watched)
    answer = await bot.say("alice", "who directed it?")

    # The statement was spared the decision call; the question was decided with its context.
    (decision_call,) = search_decision_calls(bot.llm)
    assert "Alice: I watched Amélie last night" in decision_call.prompt_text
    assert bot.searxng.queries == ["Amélie 2001 film director"]
    system = reply_calls(bot.llm)[-1].system_text
    assert f"[1] Amélie\n    URL: {WIKIPEDIA_AMELIE}" in system
    assert "Director: Jean-Pierre Jeunet" in system
    assert answer.endswith(WIKIPEDIA_AMELIE)
    assert_write_path_saw_only_user_words(bot, [watched])
    assert await bot.active_facts() == ["I watched Amélie last night (2026-11-28), the 2001 one"]


async def test_forced_search_command_searches_the_words_as_given(bot: WebBot) -> None:
    bot.mind.replies.append(f"Right now: 8 °C and passing clouds [1] {TIMEANDDATE}")

    answer = await bot.say("alice", "!search paris weather")

    assert search_decision_calls(bot.llm) == []
    assert bot.searxng.queries == ["paris weather"]
    assert f"URL: {TIMEANDDATE}" in reply_calls(bot.llm)[-1].system_text
    assert answer.endswith(TIMEANDDATE)
    # a command is never a source of memory
    assert extraction_calls(bot.llm) == []


async def test_searches_follow_the_room_in_a_group_and_only_the_person_in_a_dm(
    bot: WebBot,
) -> None:
    bot.mind.searches += [
        search("weather in Berlin today"),
        search("Berlin weather forecast 2026-11-30"),
        search("weather in Rome today"),
        search("Paris weather forecast 2026-11-30"),
    ]

    await bot.say("bob", "what's the weather in Berlin?", room="room1")
    await bot.say("alice", "and tomorrow?", room="room1")
    await bot.say("carol", "what's the weather in Rome?")
    await bot.say("alice", "is it going to rain in Paris tomorrow?")

    in_the_room, in_alices_dm = (call.prompt_text for call in search_decision_calls(bot.llm)[1::2])
    # The group conversation is shared, each turn quoted under its speaker's name, and the
    # decision knows who asks now...
    assert '- Bob wrote: "what\'s the weather in Berlin?"' in in_the_room
    assert in_the_room.endswith("Newest message, from Alice:\nand tomorrow?")
    # ...but a DM is the person's own: Carol's DM and the group room stay out of Alice's.
    assert "Rome" not in in_alices_dm and "Berlin" not in in_alices_dm
    assert "(no earlier messages)" in in_alices_dm
    assert in_alices_dm.endswith("Newest message:\nis it going to rain in Paris tomorrow?")


async def test_nothing_found_is_said_after_the_answer(bot: WebBot) -> None:
    # A model that dropped the context: the web has nothing for it, and the person is told.
    bot.mind.searches.append(search("weather tomorrow"))
    bot.mind.replies.append("I could not find a forecast.")

    answer = await bot.say("alice", "and tomorrow?")

    notice = "I searched the web for “weather tomorrow” but found nothing."
    assert answer == f"I could not find a forecast.\n\n{notice}"
    assert "Web search results" not in reply_calls(bot.llm)[-1].system_text


@pytest.mark.parametrize(
    ("searxng_mode", "operator_line"),
    [
        ("forbidden", "add `json` to `search.formats` in SearXNG's settings.yml"),
        ("slow", "did not answer within 0.5 s"),
    ],
)
async def test_searxng_failure_answers_without_the_web_and_says_so(
    bot: WebBot, caplog: pytest.LogCaptureFixture, operator_line: str
) -> None:
    bot.mind.searches.append(search("weather in Paris today"))
    bot.mind.replies.append("I think it is mild in Paris this time of year.")

    with caplog.at_level(logging.WARNING, logger="bot.websearch"):
        answer = await bot.say("alice", "what's the weather in Paris?")

    assert answer == f"I think it is mild in Paris this time of year.\n\n{UNAVAILABLE_NOTICE}"
    assert "Web search results" not in reply_calls(bot.llm)[-1].system_text
    assert operator_line in caplog.text


async def test_comparative_preference_is_one_fact_and_a_later_change_updates_it(
    bot: WebBot,
) -> None:
    # What a real model extracts: the comparison as one fact, then the new preference.
    bot.mind.facts["I prefer tea over coffee"] = [fact("I prefer tea over coffee", "preference")]
    bot.mind.facts["actually I prefer coffee now"] = [
        fact("I prefer coffee over tea now", "preference")
    ]
    bot.mind.decisions.append('{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}')

    await bot.say("alice", "I prefer tea over coffee")
    (stored,) = await bot.alice_facts(FactStatus.ACTIVE)
    await bot.say("alice", "actually I prefer coffee now")

    extraction = extraction_calls(bot.llm)[0].messages[0].content
    assert "A comparison between two things the author likes is one fact" in extraction
    assert stored.text == "I prefer tea over coffee"
    # The decision saw the old preference as candidate 1 for the new one, and UPDATE won.
    decision_prompt = next(c for c in bot.llm.calls if "New fact 1:" in c.prompt_text).prompt_text
    assert "New fact 1: I prefer coffee over tea now" in decision_prompt
    assert "1: I prefer tea over coffee" in decision_prompt
    (current,) = await bot.alice_facts(FactStatus.ACTIVE)
    (old,) = await bot.alice_facts(FactStatus.SUPERSEDED)
    assert current.text == "I prefer coffee over tea now"
    assert old.id == stored.id
    assert old.superseded_by == current.id
    # Neither statement cost a search-decision call.
    assert search_decision_calls(bot.llm) == []


async def test_search_settings_reach_searxng_and_the_prompt(
    tmp_path: Path, embedder: Embedder, searxng: SearxngShapedServer
) -> None:
    config = config_for(tmp_path / "data", searxng.base_url, max_results=1, safe_search=2)
    mind = WebMind(searches=[search("Amélie 2001 film director")])
    harness = await open_harness(tmp_path, embedder, config=config, mind=mind, supports_tools=False)
    try:
        await harness.say("alice", "who directed Amélie?")
    finally:
        await harness.app.aclose()

    (request,) = searxng.requests
    assert request.parameters["language"] == "en"
    assert request.parameters["safesearch"] == "2"
    system = reply_calls(harness.llm)[-1].system_text
    assert "[1] Amélie" in system
    assert "[2]" not in system  # max_results = 1


async def test_stored_facts_never_reach_the_search_decision(bot: WebBot) -> None:
    bot.mind.facts["My sister Claire lives in Lyon."] = [
        fact("My sister Claire lives in Lyon", "family")
    ]
    bot.mind.searches.append(search("Lyon weather forecast 2026-11-30"))

    await bot.say("alice", "My sister Claire lives in Lyon.")
    await bot.say("alice", "I'm visiting her. What's the weather there tomorrow?")

    assert await bot.active_facts() == ["My sister Claire lives in Lyon"]
    # The answer's prompt recalls the fact; the decision sees only the turns and the message.
    assert "- Alice's sister Claire lives in Lyon" in reply_calls(bot.llm)[-1].system_text
    (decision_call,) = search_decision_calls(bot.llm)
    assert "What you know about" not in decision_call.prompt_text
    assert decision_call.prompt_text.count("Claire") == 1  # the earlier turn, not the fact
