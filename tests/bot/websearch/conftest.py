"""Fixtures: a SearXNG-shaped server on 127.0.0.1 and a real client pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from bot.websearch import SearxngClient
from tests.servers.searxng_server import Mode, SearxngShapedServer, running_searxng


@pytest.fixture
def searxng_mode() -> Mode:
    """How the server answers; a test overrides it with ``parametrize``."""
    return "recorded"


@pytest.fixture
def searxng(searxng_mode: Mode) -> Iterator[SearxngShapedServer]:
    # Slow answers outlast the clients' 2 s timeout.
    with running_searxng(searxng_mode, slow_seconds=3.0) as server:
        yield server


@pytest.fixture
async def client(searxng: SearxngShapedServer) -> AsyncIterator[SearxngClient]:
    opened = SearxngClient(searxng.base_url, timeout_seconds=2.0, language="en", safe_search=1)
    yield opened
    await opened.aclose()
