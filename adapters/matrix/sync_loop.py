"""nio's sync loop, resumed when nio's own key query race stops it.

``AsyncClient.sync_forever`` schedules a key query when one is due, and ``room_send`` into an
encrypted room whose members were not synced yet runs one too. When the send's query goes
first, the loop's finds no user left to query and raises ``LocalProtocolError`` out of
``sync_forever``, which would end the client's sync for good. The client keeps its own sync
token, so the loop resumes where it stopped.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from nio import LocalProtocolError

logger = logging.getLogger(__name__)

RESUME_AFTER_SECONDS = 1.0


class SyncingClient(Protocol):
    async def sync_forever(
        self, timeout_ms: int | None = None, /, *, since: str | None = None
    ) -> None: ...


async def sync_forever_resumed(
    client: SyncingClient,
    *,
    timeout_ms: int,
    since: str | None = None,
    resume_after: float = RESUME_AFTER_SECONDS,
) -> None:
    """``client.sync_forever`` until it returns (stopped) or is cancelled."""
    while True:
        try:
            await client.sync_forever(timeout_ms, since=since)
            return
        except LocalProtocolError as error:
            logger.warning("the Matrix sync loop stopped (%s); resuming it", error)
            since = None  # the client's own token, from the last sync it handled
            await asyncio.sleep(resume_after)
