"""The search-decision prompt: what the model is shown, and how its answer is read."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.websearch.decision_prompt import (
    MAX_QUERIES,
    PROMPT_VERSION,
    TURN_CHARS,
    SearchDecision,
    build_messages,
    clean_queries,
)
from memory.records import Role
from tests.bot.websearch.turns import PARIS_WEATHER, TODAY, conversation


def test_prompt_holds_the_date_the_turns_in_order_and_the_new_message() -> None:
    system, user = build_messages("and tomorrow?", PARIS_WEATHER, TODAY)

    assert system.role == "system"
    assert "Today is 2026-11-29 (Sunday)" in system.content
    # tomorrow as a date, and no example query a small model could copy as its answer
    assert "tomorrow is 2026-11-30" in " ".join(system.content.split())
    assert "Paris" not in system.content
    assert user.role == "user"
    earlier = user.content.index("console:alice: what's the weather in Paris?")
    reply = user.content.index("assistant: It's 8°C")
    newest = user.content.index("Newest message:\nand tomorrow?")
    assert earlier < reply < newest


def test_prompt_without_history_says_so() -> None:
    _, user = build_messages("who won the match yesterday?", [], TODAY)

    assert "(no earlier messages)" in user.content


def test_long_turns_are_cut() -> None:
    turns = conversation((Role.USER, "word " * 1000))

    _, user = build_messages("and?", turns, TODAY)

    assert "word " * 100 in user.content
    assert len(user.content) < TURN_CHARS + 200


def test_a_real_model_answer_validates() -> None:
    raw = '{"search": true, "queries": ["Paris weather forecast 2026-11-30"], "time_range": null}'

    decision = SearchDecision.model_validate_json(raw)

    assert decision.search
    assert decision.queries == ["Paris weather forecast 2026-11-30"]


@pytest.mark.parametrize(
    "raw",
    [
        '{"queries": ["x"]}',  # no decision
        '{"search": true, "time_range": "decade"}',  # not a SearXNG time range
        "Sure! Here is the JSON: {",  # chatter instead of JSON
    ],
)
def test_malformed_answers_are_rejected(raw: str) -> None:
    with pytest.raises(ValidationError):
        SearchDecision.model_validate_json(raw)


def test_queries_are_stripped_deduplicated_and_capped() -> None:
    decision = SearchDecision(
        search=True,
        queries=["  Paris   weather ", "paris weather", "", "Lyon weather", "Nice weather", "x y"],
    )

    assert clean_queries(decision) == ("Paris weather", "Lyon weather", "Nice weather")
    assert len(clean_queries(decision)) == MAX_QUERIES


def test_schema_names_the_fields_and_the_version_is_set() -> None:
    schema = SearchDecision.model_json_schema()

    assert set(schema["properties"]) == {"search", "queries", "time_range"}
    assert schema["required"] == ["search"]
    assert PROMPT_VERSION.startswith("search-decision/")
