"""Web search through a self-hosted SearXNG.

The core depends on the :class:`WebSearchAdvisor` port and the ``web_search`` tool
(:mod:`bot.websearch.tool`) only; the composition root builds a :class:`SearxngAdvisor` from
a language model and a :class:`SearxngClient`.
"""

from bot.websearch.advisor import SearxngAdvisor
from bot.websearch.base import GroupRoom, SearchPlan, WebContext, WebSearchAdvisor
from bot.websearch.errors import (
    JsonFormatDisabled,
    SearchResponseError,
    SearchUnavailable,
    WebSearchError,
)
from bot.websearch.fixed import FixedWebSearchAdvisor
from bot.websearch.results import Infobox, SearchEngine, SearchResult, SearchResults, TimeRange
from bot.websearch.searxng import SearxngClient

__all__ = [
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
