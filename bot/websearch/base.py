"""The seam between the conversation core and web search.

The core asks the advisor for web context before it answers; the advisor decides whether to
search (always for a forced ``/search``), writes follow-up-aware queries, runs them and
formats the results for the prompt. Web content never reaches the memory write path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from memory.records import ConversationTurn


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
    ) -> WebContext | None:
        """Web context for answering ``text``, or ``None`` when no search is needed."""
        ...

    async def aclose(self) -> None: ...
