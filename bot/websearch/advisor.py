"""The real web search advisor: an LLM decides and writes the queries, SearXNG answers.

For a model that takes tools, the core offers the ``web_search`` tool instead and only asks
the advisor to :meth:`SearxngAdvisor.search` the model's queries. For a forced ``/search``
and for models without tool support, :meth:`SearxngAdvisor.context_for` costs one small JSON
call to the language model per message (none for a forced ``/search``, and none for a plain
statement that the cheap gate rules out). Either way, one SearXNG request per query, run
concurrently. A failure never stops the answer: the person
gets a short notice, the operator a log line that says what to fix.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from datetime import date

from pydantic import ValidationError

from bot.websearch.base import GroupRoom, SearchPlan, WebContext
from bot.websearch.decision_prompt import (
    PROMPT_VERSION,
    SearchDecision,
    build_messages,
    clean_queries,
)
from bot.websearch.errors import JsonFormatDisabled, SearchUnavailable, WebSearchError
from bot.websearch.formatting import format_section
from bot.websearch.gate import may_need_search
from bot.websearch.results import SearchEngine, SearchResults
from memory.llm import CallKind, LanguageModel, LanguageModelError
from memory.records import ConversationTurn

log = logging.getLogger(__name__)

UNAVAILABLE_NOTICE = "Web search is not available right now, so this answer is without it."
NOTHING_TO_SEARCH_NOTICE = "There was nothing to search for: write the words after the command."


def nothing_found_notice(queries: Sequence[str]) -> str:
    quoted = ", ".join(f"“{query}”" for query in queries)
    return f"I searched the web for {quoted} but found nothing."


class SearxngAdvisor:
    """Implements :class:`bot.websearch.base.WebSearchAdvisor`."""

    def __init__(
        self,
        model: LanguageModel,
        engine: SearchEngine,
        *,
        max_results: int = 5,
        history_turns: int = 8,
        snippet_chars: int = 300,
        gate: Callable[[str], bool] | None = may_need_search,
    ) -> None:
        self.model = model
        self.engine = engine
        self.max_results = max_results
        self.history_turns = history_turns
        self.snippet_chars = snippet_chars
        # None asks the model about every message (costs one call each; see benchmarks).
        self.gate = gate

    async def context_for(
        self,
        text: str,
        turns: Sequence[ConversationTurn],
        today: date,
        *,
        forced_query: str | None = None,
        group: GroupRoom | None = None,
    ) -> WebContext | None:
        if forced_query is not None:
            query = " ".join(forced_query.split())
            if not query:
                return WebContext((), "", NOTHING_TO_SEARCH_NOTICE)
            plan: SearchPlan | None = SearchPlan((query,))
        elif self.gate is not None and not self.gate(text):
            return None
        else:
            plan = await self.decide(text, turns, today, group)
        if plan is None:
            return None
        return await self.search(plan, today)

    async def search(self, plan: SearchPlan, today: date) -> WebContext:
        return self.context(plan, await self.run(plan), today)

    async def decide(
        self,
        text: str,
        turns: Sequence[ConversationTurn],
        today: date,
        group: GroupRoom | None = None,
    ) -> SearchPlan | None:
        """Ask the model whether to search; ``None`` means answer without the web."""
        decision = await self.decision(text, turns, today, group)
        if decision is None or not decision.search:
            return None
        # A model that says "search" but writes no query still gets the person's own words.
        queries = clean_queries(decision) or (" ".join(text.split())[:200],)
        return SearchPlan(queries, decision.time_range)

    async def decision(
        self,
        text: str,
        turns: Sequence[ConversationTurn],
        today: date,
        group: GroupRoom | None = None,
    ) -> SearchDecision | None:
        """The model's decision as it answered; ``None`` when the call or its JSON failed
        (logged)."""
        recent = list(turns)[-self.history_turns :] if self.history_turns else []
        messages = build_messages(text, recent, today, group)
        try:
            raw = await self.model.complete(
                messages,
                kind=CallKind.SEARCH_DECISION,
                json_schema=SearchDecision.model_json_schema(),
                temperature=0.0,
            )
        except LanguageModelError as error:
            log.warning("web search skipped: the search decision call failed: %s", error)
            return None
        try:
            return SearchDecision.model_validate_json(raw)
        except ValidationError:
            log.warning(
                "web search skipped: the model's search decision (%s) is not the expected "
                "JSON: %.200r",
                PROMPT_VERSION,
                raw,
            )
            return None

    async def run(self, plan: SearchPlan) -> list[SearchResults | WebSearchError]:
        return list(await asyncio.gather(*(self._search(query, plan) for query in plan.queries)))

    async def _search(self, query: str, plan: SearchPlan) -> SearchResults | WebSearchError:
        try:
            return await self.engine.search(query, time_range=plan.time_range)
        except WebSearchError as error:
            return error

    def context(
        self,
        plan: SearchPlan,
        outcomes: Sequence[SearchResults | WebSearchError],
        today: date,
    ) -> WebContext:
        searches = [outcome for outcome in outcomes if isinstance(outcome, SearchResults)]
        failures = [outcome for outcome in outcomes if isinstance(outcome, WebSearchError)]
        log_failures(failures)
        if not searches:
            return WebContext(plan.queries, "", UNAVAILABLE_NOTICE)
        section = format_section(
            searches, today, max_results=self.max_results, snippet_chars=self.snippet_chars
        )
        if not section:
            log.info("web search found nothing for %s", plan.queries)
            return WebContext(plan.queries, "", nothing_found_notice(plan.queries))
        return WebContext(plan.queries, section)

    async def aclose(self) -> None:
        await self.engine.aclose()


def log_failures(failures: Sequence[WebSearchError]) -> None:
    """One operator log line per distinct failure, at a level that matches who must act."""
    for message in dict.fromkeys(str(failure) for failure in failures):
        failure = next(f for f in failures if str(f) == message)
        if isinstance(failure, JsonFormatDisabled):
            log.error("web search misconfigured: %s", message)
        elif isinstance(failure, SearchUnavailable):
            log.warning("web search failed, answering without the web: %s", message)
        else:
            log.error("web search failed, answering without the web: %s", message)
