"""Which rooms are direct chats (DMs): the Matrix spec's rule, never a wider one.

A room is a DM only if it was created as one (the invite the bot accepted said
``is_direct: true``, or the bot's ``m.direct`` account data lists the room) AND its members are
now exactly the bot and the person it is a DM with, joined or invited. Every other room is a
group room however few people are in it: DM facts (``matrix:dm``) must never reach a room that
someone else can read, now or later.

A DM invite the bot accepts is written to its own ``m.direct`` account data, as Element does,
so the classification survives a restart and a lost sync token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from nio import (
    AccountDataEvent,
    AsyncClient,
    DirectRoomsErrorResponse,
    DirectRoomsResponse,
    MatrixRoom,
    UnknownAccountDataEvent,
)

logger = logging.getLogger(__name__)

DIRECT_EVENT_TYPE = "m.direct"
DirectContent = dict[str, list[str]]


class DirectDataUnavailable(Exception):
    """The homeserver did not answer with the ``m.direct`` account data."""


def partners_by_room(content: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """``m.direct`` content (person -> their DM room ids) as room id -> the people listed."""
    partners: dict[str, set[str]] = {}
    for user_id, room_ids in content.items():
        if not isinstance(room_ids, list):
            continue
        for room_id in room_ids:
            if isinstance(room_id, str):
                partners.setdefault(room_id, set()).add(user_id)
    return {room_id: frozenset(users) for room_id, users in partners.items()}


def is_direct_invite(content: Mapping[str, Any]) -> bool:
    """Whether the content of the bot's own invite member event marks the room as a DM."""
    return content.get("is_direct") is True


def dm_partner(room: MatrixRoom, bot_user_id: str, partners: Iterable[str]) -> str | None:
    """The person ``room`` is a DM with, or None when it is a group room.

    Exactly two members (joined or invited), the bot and someone the room was created as a DM
    with: a third member, or a stranger in the partner's place, makes it a group room.
    """
    members = set(room.users)
    if room.member_count != 2 or len(members) != 2 or bot_user_id not in members:
        return None
    (other,) = members - {bot_user_id}
    return other if other in set(partners) else None


def with_room(content: Mapping[str, Any], user_id: str, room_id: str) -> DirectContent | None:
    """``content`` with ``room_id`` added to ``user_id``'s DMs; None when already there."""
    current = content.get(user_id)
    rooms = [r for r in current if isinstance(r, str)] if isinstance(current, list) else []
    if room_id in rooms:
        return None
    updated: DirectContent = {
        user: list(room_ids) for user, room_ids in content.items() if isinstance(room_ids, list)
    }
    updated[user_id] = [*rooms, room_id]
    return updated


class DirectRooms:
    """The bot's knowledge of which rooms were created as DMs, and with whom."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._listed: dict[str, frozenset[str]] = {}
        self._accepted: dict[str, str] = {}
        self._write_lock = asyncio.Lock()

    @property
    def _user_id(self) -> str:
        user_id: str = self._client.user_id
        return user_id

    async def on_account_data(self, event: AccountDataEvent) -> None:
        """Follows ``m.direct`` as sync delivers it: all of it in a ``full_state`` sync (the
        adapter's first), then its changes, by the bot or another client of its account."""
        if isinstance(event, UnknownAccountDataEvent) and event.type == DIRECT_EVENT_TYPE:
            self._listed = partners_by_room(event.content)

    def partner(self, room: MatrixRoom) -> str | None:
        """The person ``room`` is a DM with, or None for a group room."""
        partners = set(self._listed.get(room.room_id, frozenset()))
        if room.room_id in self._accepted:
            partners.add(self._accepted[room.room_id])
        return dm_partner(room, self._user_id, partners)

    def room_with(self, user_id: str, rooms: Iterable[MatrixRoom]) -> str | None:
        """A DM room of the bot with ``user_id``, if there is one."""
        for room in rooms:
            if self.partner(room) == user_id:
                room_id: str = room.room_id
                return room_id
        return None

    async def record(self, room_id: str, user_id: str) -> None:
        """Remember a DM the bot joined on ``user_id``'s invite, here and in ``m.direct``."""
        self._accepted[room_id] = user_id
        async with self._write_lock:
            try:
                # Read first: another client of the bot's account may have changed it.
                updated = with_room(await self._fetch(), user_id, room_id)
                if updated is not None:
                    await self._store(updated)
            except DirectDataUnavailable as error:
                logger.warning(
                    "%s is a DM with %s for now, but could not be written to m.direct (it will "
                    "count as a group room after a restart): %s",
                    room_id,
                    user_id,
                    error,
                )

    def _path(self) -> str:
        user = quote(self._user_id, safe="")
        return f"/_matrix/client/v3/user/{user}/account_data/{DIRECT_EVENT_TYPE}"

    async def _fetch(self) -> dict[str, Any]:
        response = await self._client.list_direct_rooms()
        if isinstance(response, DirectRoomsResponse):
            return dict(response.rooms)
        if isinstance(response, DirectRoomsErrorResponse) and response.status_code == "M_NOT_FOUND":
            return {}
        raise DirectDataUnavailable(str(response))

    async def _store(self, content: DirectContent) -> None:
        headers = {
            "Authorization": f"Bearer {self._client.access_token}",
            "Content-Type": "application/json",
        }
        response = await self._client.send("PUT", self._path(), json.dumps(content), headers)
        async with response:
            if response.status != 200:
                raise DirectDataUnavailable(f"HTTP {response.status}: {await response.text()}")
