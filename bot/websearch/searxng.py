"""A SearXNG client on httpx: ``GET {base}/search?q=...&format=json``.

SearXNG answers 403 to ``format=json`` unless the operator lists ``json`` in
``search.formats`` of its settings.yml (the shipped default is ``[html]``); that case gets
its own error, because "403" alone reads like an authentication problem and is not one.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.websearch.errors import (
    JsonFormatDisabled,
    SearchResponseError,
    SearchUnavailable,
)
from bot.websearch.results import Infobox, SearchResult, SearchResults, TimeRange

log = logging.getLogger(__name__)

JSON_DISABLED_HINT = (
    "add `json` to `search.formats` in SearXNG's settings.yml "
    "(search: formats: [html, json]) and restart SearXNG"
)
LIMITER_HINT = (
    "SearXNG's limiter blocks the bot: set `server: limiter: false` in settings.yml "
    "(or allow the bot's address in limiter.toml) and restart SearXNG"
)


class _Lenient(BaseModel):
    # SearXNG adds fields between releases; only the ones read here are required.
    model_config = ConfigDict(extra="ignore")


class _RawResult(_Lenient):
    url: str | None = None
    title: str | None = None
    content: str | None = None
    engine: str | None = None
    published_date: str | None = Field(None, alias="publishedDate")


class _RawLink(_Lenient):
    title: str | None = None
    url: str | None = None


class _RawAttribute(_Lenient):
    label: str | None = None
    value: Any = None


class _RawInfobox(_Lenient):
    infobox: str | None = None
    id: str | None = None
    content: str | None = None
    urls: list[_RawLink] = Field(default_factory=list)
    attributes: list[_RawAttribute] = Field(default_factory=list)


class _RawAnswer(_Lenient):
    answer: str | None = None
    url: str | None = None


class _RawResponse(_Lenient):
    query: str = ""
    results: list[_RawResult] = Field(default_factory=list)
    # Older SearXNG releases send answers as plain strings, newer ones as objects.
    answers: list[_RawAnswer | str] = Field(default_factory=list)
    infoboxes: list[_RawInfobox] = Field(default_factory=list)
    unresponsive_engines: list[list[str] | str] = Field(default_factory=list)


def parse_published(value: str | None) -> datetime | None:
    """SearXNG sends ISO timestamps, ``null`` or an empty string; anything else is dropped."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _result(raw: _RawResult) -> SearchResult | None:
    if not raw.url:
        return None
    return SearchResult(
        title=(raw.title or raw.url).strip(),
        url=raw.url,
        content=(raw.content or "").strip(),
        engine=raw.engine or "",
        published=parse_published(raw.published_date),
    )


def _answer(raw: _RawAnswer | str) -> str | None:
    text = raw if isinstance(raw, str) else raw.answer
    return text.strip() if text and text.strip() else None


def _infobox(raw: _RawInfobox) -> Infobox | None:
    if not raw.infobox:
        return None
    url = raw.id if raw.id and raw.id.startswith("http") else None
    if url is None:
        url = next((link.url for link in raw.urls if link.url), None)
    attributes = tuple(
        (attribute.label, str(attribute.value))
        for attribute in raw.attributes
        if attribute.label and attribute.value not in (None, "")
    )
    return Infobox(raw.infobox.strip(), (raw.content or "").strip(), url, attributes)


def parse_response(query: str, payload: bytes) -> SearchResults:
    """SearXNG's JSON body as :class:`SearchResults`; raises on anything else."""
    try:
        raw = _RawResponse.model_validate_json(payload)
    except ValidationError as error:
        raise SearchResponseError(
            f"SearXNG's answer to {query!r} is not its search JSON: {error.errors()[0]['msg']}"
        ) from error
    return SearchResults(
        query=raw.query or query,
        results=tuple(r for r in map(_result, raw.results) if r is not None),
        answers=tuple(a for a in map(_answer, raw.answers) if a is not None),
        infoboxes=tuple(i for i in map(_infobox, raw.infoboxes) if i is not None),
        unresponsive_engines=tuple(
            entry if isinstance(entry, str) else ": ".join(entry)
            for entry in raw.unresponsive_engines
        ),
    )


class SearxngClient:
    """The real :class:`bot.websearch.results.SearchEngine`: one SearXNG instance."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout_seconds: float = 10.0,
        language: str | None = None,
        safe_search: int = 1,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.language = language
        self.safe_search = safe_search
        self._owns_client = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout_seconds)
        self._timeout = timeout_seconds

    def parameters(self, query: str, time_range: TimeRange | None) -> dict[str, str]:
        parameters = {"q": query, "format": "json", "safesearch": str(self.safe_search)}
        if self.language:
            parameters["language"] = self.language
        if time_range:
            parameters["time_range"] = time_range
        return parameters

    async def search(self, query: str, *, time_range: TimeRange | None = None) -> SearchResults:
        url = f"{self.base_url}/search"
        try:
            response = await self._http.get(
                url, params=self.parameters(query, time_range), timeout=self._timeout
            )
        except httpx.TimeoutException as error:
            raise SearchUnavailable(
                f"SearXNG at {self.base_url} did not answer within {self._timeout:g} s"
            ) from error
        except (httpx.RequestError, httpx.InvalidURL) as error:
            # Also a search.searxng_url without http:// lands here, with httpx's reason.
            raise SearchUnavailable(
                f"SearXNG at {self.base_url} cannot be reached: {error}"
            ) from error
        self._check_status(response)
        return parse_response(query, response.content)

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code == 403:
            raise JsonFormatDisabled(
                f"SearXNG at {self.base_url} refused format=json (HTTP 403): {JSON_DISABLED_HINT}"
            )
        if response.status_code == 429:
            raise SearchResponseError(
                f"SearXNG at {self.base_url} rate-limited the search (HTTP 429): {LIMITER_HINT}"
            )
        if response.status_code != 200:
            raise SearchResponseError(
                f"SearXNG at {self.base_url} answered HTTP {response.status_code}: "
                f"{response.text[:200]!r}"
            )

    async def aclose(self) -> None:
        if self._owns_client:
            await self._http.aclose()
