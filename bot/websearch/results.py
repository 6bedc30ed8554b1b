"""Typed, frozen records of what a web search returned, independent of the search engine."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

TimeRange = Literal["day", "week", "month", "year"]


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    content: str
    engine: str
    published: datetime | None = None


@dataclass(frozen=True, slots=True)
class Infobox:
    """A summary box (Wikipedia/Wikidata style) about the main entity of the query."""

    title: str
    content: str
    url: str | None
    attributes: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class SearchResults:
    query: str
    results: tuple[SearchResult, ...] = ()
    answers: tuple[str, ...] = ()
    infoboxes: tuple[Infobox, ...] = ()
    unresponsive_engines: tuple[str, ...] = field(default=())

    @property
    def is_empty(self) -> bool:
        return not (self.results or self.answers or self.infoboxes)


class SearchEngine(Protocol):
    """One web search: the port between the advisor and SearXNG (or a test double)."""

    async def search(self, query: str, *, time_range: TimeRange | None = None) -> SearchResults:
        """Results for ``query``; raises :class:`bot.websearch.errors.WebSearchError`."""
        ...

    async def aclose(self) -> None: ...
