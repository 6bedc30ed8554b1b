"""The "Mnemo is typing" notice, kept alive while the answer is being written."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from nio import AsyncClient

logger = logging.getLogger(__name__)

TYPING_TIMEOUT_MS = 30_000
# Renewed before the server lets it lapse: LLM answers often take longer than 30 s.
RENEW_SECONDS = 20.0


@contextlib.asynccontextmanager
async def typing_notice(client: AsyncClient, room_id: str) -> AsyncIterator[None]:
    renewer = asyncio.create_task(_keep_typing(client, room_id))
    try:
        yield
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
        await client.room_typing(room_id, typing_state=False)


async def _keep_typing(client: AsyncClient, room_id: str) -> None:
    while True:
        response = await client.room_typing(room_id, typing_state=True, timeout=TYPING_TIMEOUT_MS)
        if hasattr(response, "message"):
            # A typing notice is a courtesy: failing to send one must not stop the answer.
            logger.debug("typing notice in %s failed: %s", room_id, response.message)
        await asyncio.sleep(RENEW_SECONDS)
