"""The SearXNG client against a SearXNG-shaped server on 127.0.0.1."""

from __future__ import annotations

import socket
from datetime import datetime

import pytest

from bot.websearch import (
    JsonFormatDisabled,
    SearchResponseError,
    SearchUnavailable,
    SearxngClient,
)
from bot.websearch.searxng import parse_published, parse_response
from tests.servers.searxng_server import SearxngShapedServer, running_searxng


async def test_results_are_parsed_with_their_fields(client: SearxngClient) -> None:
    found = await client.search("Paris weather forecast 2026-11-30")

    assert [result.url for result in found.results] == [
        "https://www.meteofrance.com/previsions-meteo-france/paris/75000",
        "https://www.accuweather.com/en/fr/paris/623/daily-weather-forecast/623",
        "https://www.bbc.com/weather/2988507",
    ]
    first = found.results[0]
    assert first.title.startswith("Météo Paris (75000)")
    assert "averses" in first.content
    assert first.engine == "duckduckgo"
    assert first.published == datetime(2026, 11, 29, 6, 0)
    # null and "" published dates both mean "unknown"
    assert found.results[1].published is None
    assert found.results[2].published is None
    assert found.unresponsive_engines == ("google: Suspended: CAPTCHA",)


async def test_answers_and_infoboxes_are_parsed(client: SearxngClient) -> None:
    found = await client.search("Amélie 2001 film director")

    assert found.answers == ("Amélie (2001) was directed by Jean-Pierre Jeunet.",)
    (box,) = found.infoboxes
    assert box.title == "Amélie"
    assert box.url == "https://en.wikipedia.org/wiki/Am%C3%A9lie"
    assert ("Director", "Jean-Pierre Jeunet") in box.attributes


async def test_answers_as_plain_strings_from_older_searxng(client: SearxngClient) -> None:
    found = await client.search("100 usd in eur")

    assert found.answers == ("100 USD = 86.07 EUR",)
    assert not found.is_empty


async def test_request_carries_format_language_safesearch_and_time_range(
    client: SearxngClient, searxng: SearxngShapedServer
) -> None:
    await client.search("paris weather", time_range="day")

    (request,) = searxng.requests
    assert request.path == "/search"
    assert request.parameters == {
        "q": "paris weather",
        "format": "json",
        "language": "en",
        "safesearch": "1",
        "time_range": "day",
    }


async def test_optional_parameters_are_left_out_when_unset(searxng: SearxngShapedServer) -> None:
    client = SearxngClient(searxng.base_url + "/", safe_search=0)
    try:
        await client.search("anything")
    finally:
        await client.aclose()

    (request,) = searxng.requests
    assert request.path == "/search"  # the trailing slash of the base URL is not doubled
    assert request.parameters == {"q": "anything", "format": "json", "safesearch": "0"}


async def test_empty_results_are_empty(client: SearxngClient) -> None:
    found = await client.search("weather tomorrow")

    assert found.is_empty
    assert found.query == "weather tomorrow"


async def test_403_says_to_enable_json_in_settings_yml() -> None:
    with running_searxng("forbidden") as server:
        client = SearxngClient(server.base_url)
        try:
            with pytest.raises(JsonFormatDisabled) as raised:
                await client.search("paris weather")
        finally:
            await client.aclose()

    message = str(raised.value)
    assert "HTTP 403" in message
    assert "add `json` to `search.formats`" in message
    assert "settings.yml" in message


async def test_429_says_the_limiter_blocks_the_bot() -> None:
    with running_searxng("rate_limited") as server:
        client = SearxngClient(server.base_url)
        try:
            with pytest.raises(SearchResponseError) as raised:
                await client.search("paris weather")
        finally:
            await client.aclose()

    assert "HTTP 429" in str(raised.value)
    assert "`server: limiter: false` in settings.yml" in str(raised.value)


async def test_timeout_is_unavailable() -> None:
    with running_searxng("slow", slow_seconds=3.0) as server:
        client = SearxngClient(server.base_url, timeout_seconds=0.2)
        try:
            with pytest.raises(SearchUnavailable, match=r"did not answer within 0\.2 s"):
                await client.search("paris weather")
        finally:
            await client.aclose()


async def test_unreachable_server_is_unavailable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    client = SearxngClient(f"http://127.0.0.1:{free_port}", timeout_seconds=2.0)
    try:
        with pytest.raises(SearchUnavailable, match="cannot be reached"):
            await client.search("paris weather")
    finally:
        await client.aclose()


async def test_url_without_scheme_says_why() -> None:
    client = SearxngClient("127.0.0.1:8888")
    try:
        with pytest.raises(SearchUnavailable, match="missing an 'http://' or 'https://'"):
            await client.search("paris weather")
    finally:
        await client.aclose()


async def test_server_error_is_a_response_error() -> None:
    with running_searxng("server_error") as server:
        client = SearxngClient(server.base_url)
        try:
            with pytest.raises(SearchResponseError, match="HTTP 500"):
                await client.search("paris weather")
        finally:
            await client.aclose()


async def test_html_instead_of_json_is_a_response_error() -> None:
    with running_searxng("not_json") as server:
        client = SearxngClient(server.base_url)
        try:
            with pytest.raises(SearchResponseError, match="not its search JSON"):
                await client.search("paris weather")
        finally:
            await client.aclose()


def test_results_without_url_are_skipped() -> None:
    payload = b'{"query": "q", "results": [{"title": "no link"}, {"url": "https://a.example"}]}'

    found = parse_response("q", payload)

    assert [result.url for result in found.results] == ["https://a.example"]
    assert found.results[0].title == "https://a.example"  # no title: the URL stands in


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-29T06:00:00", datetime(2026, 11, 29, 6, 0)),
        ("2026-11-29", datetime(2026, 11, 29)),
        ("", None),
        (None, None),
        ("yesterday", None),
    ],
)
def test_published_dates(raw: str | None, expected: datetime | None) -> None:
    assert parse_published(raw) == expected
