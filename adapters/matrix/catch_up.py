"""What happened while the bot was not running: the sync gap after a restart.

The first sync after start-up brings the events since the previous run's sync token; when the
gap holds more than the homeserver puts into one sync (a "limited" timeline), the rest is read
backwards from that sync's ``prev_batch`` down to the old token. Bounded: only events younger
than ``catch_up.hours``, at most :data:`SCAN_LIMIT` events read per room, and of the messages
for the bot only the newest ``catch_up.messages_per_room`` are learned from. A first start (no
earlier token) has no gap: what was said before the bot ever ran is not its business.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from nio import AsyncClient, MessageDirection, RoomMessagesResponse
from nio.responses import Timeline

from adapters.matrix.normalise import time_of
from bot.messages import IncomingMessage

logger = logging.getLogger(__name__)

SCAN_LIMIT = 1000
PAGE_SIZE = 100


async def gap_events(
    client: AsyncClient, room_id: str, timeline: Timeline, previous_token: str, since: datetime
) -> list[Any]:
    """The room's events after ``previous_token`` and not before ``since``, oldest first."""
    events: list[Any] = list(timeline.events)
    start = timeline.prev_batch if timeline.limited else None
    while start is not None and len(events) < SCAN_LIMIT and not _reaches(events, since):
        response = await client.room_messages(
            room_id, start, previous_token, MessageDirection.back, PAGE_SIZE
        )
        if not isinstance(response, RoomMessagesResponse):
            logger.warning("could not read what was said in %s while away: %s", room_id, response)
            break
        if not response.chunk:
            break
        events = [*reversed(response.chunk), *events]
        start = response.end
    return [event for event in events if _time(event) >= since][-SCAN_LIMIT:]


def _time(event: Any) -> datetime:
    return time_of(int(getattr(event, "server_timestamp", 0)))


def _reaches(events: Sequence[Any], since: datetime) -> bool:
    return bool(events) and _time(events[0]) < since


def for_the_bot(message: IncomingMessage) -> bool:
    return message.is_direct or message.mentions_bot or message.reply_to_bot


def newest_for_the_bot(messages: Sequence[IncomingMessage], limit: int) -> set[str]:
    """The ids of the newest ``limit`` messages meant for the bot."""
    meant = [m for m in messages if for_the_bot(m) and m.message_id is not None]
    return {m.message_id for m in meant[-limit:] if m.message_id is not None}
