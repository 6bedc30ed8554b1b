"""A fixed web search advisor: the test double of the :class:`WebSearchAdvisor` port.

It returns the context it was given (or ``None``) and records every call, so the
conversation core can be tested without an LLM decision or a SearXNG server. A tool-call
search (:meth:`FixedWebSearchAdvisor.search`) gets the same context, or an empty one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from bot.websearch.base import GroupRoom, SearchPlan, WebContext
from memory.records import ConversationTurn


@dataclass(frozen=True, slots=True)
class AdvisorCall:
    text: str
    turns: tuple[ConversationTurn, ...]
    today: date
    forced_query: str | None
    group: GroupRoom | None


@dataclass
class FixedWebSearchAdvisor:
    context: WebContext | None = None
    calls: list[AdvisorCall] = field(default_factory=list)
    searches: list[SearchPlan] = field(default_factory=list)

    async def context_for(
        self,
        text: str,
        turns: Sequence[ConversationTurn],
        today: date,
        *,
        forced_query: str | None = None,
        group: GroupRoom | None = None,
    ) -> WebContext | None:
        self.calls.append(AdvisorCall(text, tuple(turns), today, forced_query, group))
        return self.context

    async def search(self, plan: SearchPlan, today: date) -> WebContext:
        self.searches.append(plan)
        return self.context or WebContext(plan.queries, "")

    async def aclose(self) -> None:
        return None
