"""The ``web_search`` tool: its definition for the model, and the model's calls, validated.

The parameters are written out as plain JSON schema (no ``anyOf``, no ``$ref``) because
Ollama's tool definition keeps only ``type``, ``items``, ``description`` and ``enum`` per
property. The arguments of each call are validated with :class:`WebSearchArguments`; a call
of another tool or with arguments that do not fit is reported, not run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.websearch.base import SearchPlan, WebContext
from bot.websearch.decision_prompt import MAX_QUERIES, clean_query_list
from bot.websearch.results import TimeRange
from memory.llm import ChatMessage, ToolCall, ToolSpec, tool_result

TOOL_NAME = "web_search"
DESCRIPTION = "Search the web. Results are numbered sources with URLs; cite those you use."
QUERIES_DESCRIPTION = (
    "1 to 3 standalone queries (the engine never sees the conversation): name places, "
    "titles and people, and write absolute dates"
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "queries": {
            "type": "array",
            "items": {"type": "string"},
            "description": QUERIES_DESCRIPTION,
        },
        "time_range": {
            "type": "string",
            "enum": ["day", "week", "month", "year"],
            "description": "only recent pages, for news or anything about now",
        },
    },
    "required": ["queries"],
}
WEB_SEARCH_TOOL = ToolSpec(TOOL_NAME, DESCRIPTION, PARAMETERS)

GUIDE = """\
Use the web_search tool when the answer needs current or changing information (weather, \
news, prices, opening hours, schedules, scores) or facts about the world you may not know; \
not for small talk, opinions, or what the person says or you remember about them. The \
search engine never sees the conversation, so each query must stand alone: a follow-up \
names the place, title or person it is about; replace pronouns with what they refer to, \
write absolute dates (tomorrow is {tomorrow}), leave out private details."""


def tool_guide(today: date) -> str:
    """The system prompt's paragraph about the tool, with tomorrow's date for the example."""
    return GUIDE.format(tomorrow=(today + timedelta(days=1)).isoformat())


class WebSearchArguments(BaseModel):
    """The arguments of one ``web_search`` call. A lone string is taken as one query."""

    model_config = ConfigDict(extra="ignore")

    queries: list[str] = Field(min_length=1)
    time_range: TimeRange | None = None

    @field_validator("queries", mode="before")
    @classmethod
    def one_query_as_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


@dataclass(frozen=True, slots=True)
class ReadCall:
    """One call as read: its arguments, or why it cannot be run."""

    call: ToolCall
    arguments: WebSearchArguments | None
    problem: str | None = None


def read_call(call: ToolCall) -> ReadCall:
    if call.name != TOOL_NAME:
        return ReadCall(call, None, f"there is no tool {call.name!r}, only {TOOL_NAME!r}")
    try:
        arguments = WebSearchArguments.model_validate(call.arguments)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        return ReadCall(call, None, f"arguments {call.arguments!r:.200} do not fit ({problems})")
    if not clean_query_list(arguments.queries):
        return ReadCall(call, None, "its queries are all empty")
    return ReadCall(call, arguments)


def search_plan(calls: Sequence[ReadCall]) -> SearchPlan | None:
    """All usable calls' queries as one plan (at most three); ``None`` if no call is usable."""
    usable = [read.arguments for read in calls if read.arguments is not None]
    if not usable:
        return None
    queries = clean_query_list([query for arguments in usable for query in arguments.queries])
    time_range = next((a.time_range for a in usable if a.time_range is not None), None)
    return SearchPlan(queries[:MAX_QUERIES], time_range)


NOT_RUN = "Not run: {problem}."
MERGED = "Searched together with the first web_search call, whose result lists the sources."
NO_RESULTS = (
    "The web search gave no results ({notice}). Answer from what you know, say that the "
    "web search did not help, and cite no sources."
)


def results_text(context: WebContext) -> str:
    """What the model is told about the searches: the sources, or why there are none."""
    if context.prompt_section:
        return context.prompt_section
    return NO_RESULTS.format(notice=(context.notice or "nothing found").rstrip("."))


def tool_results(calls: Sequence[ReadCall], context: WebContext) -> list[ChatMessage]:
    """One result per call, in order: the searches' results go to the first usable call."""
    messages: list[ChatMessage] = []
    answered = False
    for read in calls:
        if read.problem is not None:
            text = NOT_RUN.format(problem=read.problem)
        elif answered:
            text = MERGED
        else:
            text, answered = results_text(context), True
        messages.append(tool_result(read.call, text))
    return messages
