"""Errors raised by web search.

One root, so the advisor can catch the whole search layer at once::

    WebSearchError
     ├── SearchUnavailable     SearXNG unreachable or not answering in time (try again later)
     ├── JsonFormatDisabled    HTTP 403: SearXNG's settings.yml does not allow format=json
     └── SearchResponseError   any other HTTP error, or a body that is not SearXNG's JSON

httpx errors are translated at the boundary, with the original kept as ``__cause__``.
"""


class WebSearchError(Exception):
    """Web search could not give results."""


class SearchUnavailable(WebSearchError):
    """SearXNG could not be reached or did not answer within the timeout."""


class JsonFormatDisabled(WebSearchError):
    """SearXNG refused ``format=json``: the operator must enable it in settings.yml."""


class SearchResponseError(WebSearchError):
    """SearXNG answered with an error status or with something that is not its JSON."""
