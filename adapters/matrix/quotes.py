"""The messages a Matrix message replies to (its reply chain, and its thread's root), as context.

Fetched from the homeserver one event at a time, from the message's own room only (matrix-nio
decrypts them where it holds the key), and only those the speaker could read: nothing from
before the history every member of the room can read (``shared_since``). Undecryptable,
redacted and non-text events are left out.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime

from nio import AsyncClient, MatrixRoom, RoomGetEventResponse, RoomMessageFormatted

from adapters.matrix.mentions import strip_reply_fallback
from adapters.matrix.normalise import time_of
from adapters.matrix.relations import Relations, relations_of
from bot.messages import QuotedMessage

# How many earlier messages one message brings along: the chain is followed this far.
REPLY_CHAIN_LIMIT = 5
REMEMBERED_EVENTS = 256


@dataclass(frozen=True, slots=True)
class FetchedEvent:
    event_id: str
    sender: str
    text: str | None
    time: datetime
    relations: Relations


class QuoteFetcher:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._fetched: OrderedDict[tuple[str, str], FetchedEvent | None] = OrderedDict()

    async def fetch(self, room_id: str, event_id: str) -> FetchedEvent | None:
        """The event, or None when the homeserver does not give it (unknown, not allowed)."""
        key = (room_id, event_id)
        if key not in self._fetched:
            self._fetched[key] = await self._get(room_id, event_id)
            while len(self._fetched) > REMEMBERED_EVENTS:
                self._fetched.popitem(last=False)
        return self._fetched[key]

    async def _get(self, room_id: str, event_id: str) -> FetchedEvent | None:
        response = await self._client.room_get_event(room_id, event_id)
        if not isinstance(response, RoomGetEventResponse):
            return None
        event = response.event
        content = event.source.get("content", {})
        body = content.get("body") if isinstance(event, RoomMessageFormatted) else None
        return FetchedEvent(
            event_id=event_id,
            sender=event.sender,
            text=strip_reply_fallback(body).strip() if isinstance(body, str) else None,
            time=time_of(event.server_timestamp),
            relations=relations_of(content),
        )

    async def chain(
        self, room: MatrixRoom, relations: Relations, *, since: datetime | None
    ) -> tuple[QuotedMessage, ...]:
        """The replied-to messages nearest first, then the thread root, as far as readable."""
        quoted: list[QuotedMessage] = []
        seen: set[str] = set()
        next_id = relations.reply_to_event_id
        while next_id is not None and next_id not in seen and len(seen) < REPLY_CHAIN_LIMIT:
            seen.add(next_id)
            fetched = await self.fetch(room.room_id, next_id)
            if fetched is None:
                break
            quoted += self._readable(room, fetched, since)
            next_id = fetched.relations.reply_to_event_id
        root = relations.thread_root_id
        if root is not None and root not in seen and len(seen) < REPLY_CHAIN_LIMIT:
            fetched = await self.fetch(room.room_id, root)
            if fetched is not None:
                quoted += self._readable(room, fetched, since)
        return tuple(quoted)

    def _readable(
        self, room: MatrixRoom, fetched: FetchedEvent, since: datetime | None
    ) -> list[QuotedMessage]:
        if not fetched.text or (since is not None and fetched.time < since):
            return []
        return [
            QuotedMessage(
                message_id=fetched.event_id,
                author_name=room.user_name(fetched.sender) or fetched.sender,
                text=fetched.text,
                time=fetched.time,
                from_bot=fetched.sender == self._client.user_id,
            )
        ]
