"""The public names of bot.websearch are the ones intended, and the test double works."""

from __future__ import annotations

import bot.websearch
from bot.websearch import FixedWebSearchAdvisor, GroupRoom, SearchPlan, WebContext
from tests.bot.websearch.turns import PARIS_WEATHER, TODAY


def test_public_names() -> None:
    assert sorted(bot.websearch.__all__) == [
        "FixedWebSearchAdvisor",
        "GroupRoom",
        "Infobox",
        "JsonFormatDisabled",
        "SearchEngine",
        "SearchPlan",
        "SearchResponseError",
        "SearchResult",
        "SearchResults",
        "SearchUnavailable",
        "SearxngAdvisor",
        "SearxngClient",
        "TimeRange",
        "WebContext",
        "WebSearchAdvisor",
        "WebSearchError",
    ]
    for name in bot.websearch.__all__:
        assert getattr(bot.websearch, name) is not None


async def test_fixed_advisor_returns_its_context_and_records_calls() -> None:
    context = WebContext(("q",), "section")
    advisor = FixedWebSearchAdvisor(context)

    got = await advisor.context_for("and tomorrow?", PARIS_WEATHER, TODAY, forced_query="x")
    room = GroupRoom("Mnemo", "Alice")
    await advisor.context_for("and?", [], TODAY, group=room)

    assert got is context
    (call, in_a_room) = advisor.calls
    assert call.text == "and tomorrow?"
    assert call.turns == tuple(PARIS_WEATHER)
    assert call.forced_query == "x"
    assert (call.group, in_a_room.group) == (None, room)


async def test_fixed_advisor_searches_return_its_context_or_an_empty_one() -> None:
    plan = SearchPlan(("Paris weather",))
    context = WebContext(("q",), "section")

    assert await FixedWebSearchAdvisor(context).search(plan, TODAY) is context
    empty = FixedWebSearchAdvisor()
    assert await empty.search(plan, TODAY) == WebContext(("Paris weather",), "")
    assert empty.searches == [plan]
