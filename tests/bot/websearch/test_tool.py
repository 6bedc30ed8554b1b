"""The web_search tool: its definition, and how the model's calls are read."""

from __future__ import annotations

from datetime import date

from bot.websearch import SearchPlan, WebContext
from bot.websearch.tool import (
    PARAMETERS,
    TOOL_NAME,
    WEB_SEARCH_TOOL,
    WebSearchArguments,
    read_call,
    search_plan,
    tool_guide,
    tool_results,
)
from memory.llm import ToolCall


def call(**arguments: object) -> ToolCall:
    return ToolCall(TOOL_NAME, dict(arguments))


def test_definition_is_plain_schema_that_the_arguments_model_accepts() -> None:
    assert WEB_SEARCH_TOOL.name == "web_search"
    assert WEB_SEARCH_TOOL.parameters_schema is PARAMETERS
    properties = PARAMETERS["properties"]
    # Ollama keeps only type/items/description/enum per property: nothing else may matter.
    for schema in properties.values():
        assert set(schema) <= {"type", "items", "description", "enum"}
    assert set(properties) == set(WebSearchArguments.model_fields)
    assert properties["time_range"]["enum"] == ["day", "week", "month", "year"]
    assert PARAMETERS["required"] == ["queries"]


def test_guide_names_tomorrow_as_a_date_without_an_example_query() -> None:
    guide = tool_guide(date(2026, 11, 29))
    assert "(tomorrow is 2026-11-30)" in guide
    assert "Paris" not in guide


def test_a_good_call_is_read_with_its_time_range() -> None:
    read = read_call(call(queries=["Paris weather 2026-11-30"], time_range="day"))
    assert read.problem is None
    assert read.arguments == WebSearchArguments(
        queries=["Paris weather 2026-11-30"], time_range="day"
    )


def test_a_lone_string_is_one_query_and_extra_keys_are_ignored() -> None:
    read = read_call(call(queries="Paris weather", reason="the person asked"))
    assert read.arguments is not None
    assert read.arguments.queries == ["Paris weather"]


def test_calls_that_cannot_run_say_why() -> None:
    assert "no tool 'get_weather'" in str(read_call(ToolCall("get_weather", {})).problem)
    assert "time_range" in str(read_call(call(queries=["x"], time_range="hour")).problem)
    assert read_call(call(queries=["  ", ""])).problem == "its queries are all empty"


def test_plan_merges_usable_calls_cleans_and_keeps_three() -> None:
    reads = [
        read_call(call(queries=["Paris  weather", "paris weather"])),
        read_call(ToolCall("other", {})),
        read_call(
            call(queries=["Lyon weather", "Nice weather", "Lille weather"], time_range="day")
        ),
    ]
    assert search_plan(reads) == SearchPlan(
        ("Paris weather", "Lyon weather", "Nice weather"), "day"
    )
    assert search_plan([read_call(ToolCall("other", {}))]) is None


def test_each_call_gets_one_result_and_the_sources_go_to_the_first_usable() -> None:
    reads = [
        read_call(ToolCall("other", {}, "1")),
        read_call(call(queries=["a"])),
        read_call(call(queries=["b"])),
    ]
    found = WebContext(("a", "b"), "[1] A\n    URL: https://a.example")
    messages = tool_results(reads, found)
    assert [m.role for m in messages] == ["tool", "tool", "tool"]
    assert [m.tool_call for m in messages] == [read.call for read in reads]
    assert messages[0].content == "Not run: there is no tool 'other', only 'web_search'."
    assert messages[1].content == found.prompt_section
    assert "first web_search call" in messages[2].content


def test_no_sources_tell_the_model_why_and_to_cite_none() -> None:
    failed = WebContext(("a",), "", "Web search is not available right now.")
    (message,) = tool_results([read_call(call(queries=["a"]))], failed)
    assert message.content.startswith(
        "The web search gave no results (Web search is not available right now)."
    )
    assert "cite no sources" in message.content
