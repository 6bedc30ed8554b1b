"""The sync loop resumes when nio's key-query race stops it (a stand-in for nio's client:
the race needs a send and a sync to meet within one event-loop turn, which a test against
Synapse cannot arrange on purpose)."""

from __future__ import annotations

import logging

import pytest
from nio import LocalProtocolError

from adapters.matrix.sync_loop import sync_forever_resumed


class RacingClient:
    """Stand-in for ``AsyncClient``: its loop stops on nio's race ``races`` times, then is
    stopped the normal way (returns)."""

    def __init__(self, races: int) -> None:
        self.races = races
        self.calls: list[tuple[int | None, str | None]] = []

    async def sync_forever(
        self, timeout_ms: int | None = None, /, *, since: str | None = None
    ) -> None:
        self.calls.append((timeout_ms, since))
        if len(self.calls) <= self.races:
            raise LocalProtocolError("No key query required.")


async def test_the_loop_resumes_from_the_clients_own_token(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = RacingClient(races=2)

    with caplog.at_level(logging.WARNING):
        await sync_forever_resumed(client, timeout_ms=30_000, since="s1", resume_after=0)

    assert client.calls == [(30_000, "s1"), (30_000, None), (30_000, None)]
    assert "No key query required" in caplog.text


async def test_a_loop_stopped_normally_is_not_resumed() -> None:
    client = RacingClient(races=0)

    await sync_forever_resumed(client, timeout_ms=1000, resume_after=0)

    assert client.calls == [(1000, None)]
