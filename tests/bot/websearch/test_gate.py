"""The cheap gate that spares the decision call for plain statements."""

from __future__ import annotations

import pytest

from bot.websearch.gate import may_need_search


@pytest.mark.parametrize(
    "text",
    [
        "what's the weather in Paris?",
        "and tomorrow?",
        "and tomorrow",  # a follow-up without its question mark
        "who directed it",
        "Is it raining in Lyon",
        "look up the opening hours of the Louvre",
        "tell me the latest news about the Artemis mission",
        "¿Qué tiempo hace en Madrid",
        "Wie wird das Wetter morgen",
        "quel temps fait-il à Paris",
        "Any scores from the match\uff1f",
    ],
)
def test_questions_and_requests_go_to_the_model(text: str) -> None:
    assert may_need_search(text)


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tea over coffee",
        "actually I prefer coffee now",
        "My sister is a doctor in Lyon.",
        "thanks!",
        "I watched Amélie last night, the 2001 one with Audrey Tautou.",
        "Ich wohne in Berlin",
        "",
        "   ",
    ],
)
def test_plain_statements_are_spared_the_decision(text: str) -> None:
    assert not may_need_search(text)
