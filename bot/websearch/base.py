"""The seam between the conversation core and web search.

Two ways in. With a model that takes tools, the core offers the ``web_search`` tool in its
reply call and, when the model calls it, asks the advisor to :meth:`~WebSearchAdvisor.search`
the queries the model wrote. With a forced ``/search``, or a model without tool support, the
core asks for :meth:`~WebSearchAdvisor.context_for` a message before it answers: the advisor
decides whether to search (always for a forced ``/search``, else one JSON decision call),
writes follow-up-aware queries, runs them and formats the results for the prompt. In a
group room the decision is told so (:class:`GroupRoom`): the room's turns are other people's
words, quoted. Web content never reaches the memory write path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from bot.websearch.results import TimeRange
from memory.records import ConversationTurn


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """The queries to run (already cleaned: stripped, distinct, at most three)."""

    queries: tuple[str, ...]
    time_range: TimeRange | None = None


@dataclass(frozen=True, slots=True)
class GroupRoom:
    """A message in a group room: the bot's name and the display name of who wrote it."""

    bot_name: str
    asker: str


@dataclass(frozen=True, slots=True)
class WebContext:
    """What web search adds to an answer's prompt.

    ``prompt_section`` holds the results (title, URL, snippet) for the system prompt, or is
    empty; ``notice`` is a short line for the person when search failed or found nothing.
    """

    queries: tuple[str, ...]
    prompt_section: str
    notice: str | None = None


class WebSearchAdvisor(Protocol):
    async def context_for(
        self,
        text: str,
        turns: Sequence[ConversationTurn],
        today: date,
        *,
        forced_query: str | None = None,
        group: GroupRoom | None = None,
    ) -> WebContext | None:
        """Web context for answering ``text``, or ``None`` when no search is needed;
        ``group`` is ``None`` in a DM."""
        ...

    async def search(self, plan: SearchPlan, today: date) -> WebContext:
        """Run ``plan`` (queries the model wrote in a tool call) and format the results."""
        ...

    async def aclose(self) -> None: ...
