"""Which rooms are direct chats (DMs): the Matrix spec's rule, never a wider one.

A room is a DM only if it was created as one (the invite the bot accepted said
``is_direct: true``, or the bot's ``m.direct`` account data lists the room) AND its members are
now exactly the bot and the person it is a DM with, joined or invited. Every other room is a
group room however few people are in it: DM facts (``matrix:dm``) must never reach a room that
someone else can read, now or later.

A DM invite the bot accepts is written to its own ``m.direct`` account data, as Element does,
so the classification survives a restart and a lost sync token.

A DM that has had anyone else in it (a membership event of a third person: invited, joined, or
gone again) is a group room for good: the bot takes it out of its ``m.direct``, so that person,
who may have read the history and may be invited back, never sees DM facts there.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

from nio import (
    AccountDataEvent,
    AsyncClient,
    DirectRoomsErrorResponse,
    DirectRoomsResponse,
    MatrixRoom,
    RoomMemberEvent,
    SyncResponse,
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


def has_outsider(people: Iterable[str], partners: Iterable[str]) -> bool:
    """Whether a room created as a DM with ``partners`` has had someone else in it.

    ``people`` are everyone but the bot seen as a member (joined, invited, or gone again): more
    than one person, or one the room was not created with, makes it a group room for good.
    """
    seen = set(people)
    return len(seen) > 1 or not seen <= set(partners)


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


def without_room(content: Mapping[str, Any], room_id: str) -> DirectContent | None:
    """``content`` with ``room_id`` taken out of everyone's DMs; None when it was not there."""
    lists = {user: room_ids for user, room_ids in content.items() if isinstance(room_ids, list)}
    if not any(room_id in room_ids for room_ids in lists.values()):
        return None
    return {user: [r for r in room_ids if r != room_id] for user, room_ids in lists.items()}


def member_subjects(response: SyncResponse, room_id: str) -> set[str]:
    """Everyone a membership event in this sync of a joined room is about."""
    info = response.rooms.join[room_id]
    events = [*info.state, *info.timeline.events]
    return {event.state_key for event in events if isinstance(event, RoomMemberEvent)}


class DirectRooms:
    """The bot's knowledge of which rooms were created as DMs, and with whom."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._listed: dict[str, frozenset[str]] = {}
        self._accepted: dict[str, str] = {}
        self._demoted: set[str] = set()
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

    async def on_member(self, room: MatrixRoom, event: RoomMemberEvent) -> None:
        """Checks each membership change of the timeline before the messages after it."""
        await self._check(room, {event.state_key})

    async def on_sync(self, response: SyncResponse) -> None:
        """Checks the joined rooms of a handled sync, with the ``m.direct`` it brought, also
        against the membership events of its state part, which reach no event callback (all of
        them in a ``full_state`` sync: someone who came and went while the bot was away)."""
        for room_id in response.rooms.join:
            room = self._client.rooms.get(room_id)
            if room is not None:
                await self._check(room, member_subjects(response, room_id))

    def partner(self, room: MatrixRoom) -> str | None:
        """The person ``room`` is a DM with, or None for a group room."""
        if room.room_id in self._demoted:
            return None
        return dm_partner(room, self._user_id, self._partners_of(room.room_id))

    def was_demoted(self, room_id: str) -> bool:
        """Whether ``room_id`` stopped being a DM in this run (at start-up: while away)."""
        return room_id in self._demoted

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
        try:
            await self._update(lambda content: with_room(content, user_id, room_id))
        except DirectDataUnavailable as error:
            logger.warning(
                "%s is a DM with %s for now, but could not be written to m.direct (it will "
                "count as a group room after a restart): %s",
                room_id,
                user_id,
                error,
            )

    def _partners_of(self, room_id: str) -> set[str]:
        partners = set(self._listed.get(room_id, frozenset()))
        if room_id in self._accepted:
            partners.add(self._accepted[room_id])
        return partners

    async def _check(self, room: MatrixRoom, subjects: set[str]) -> None:
        """Demotes a DM that ``subjects`` (membership events) or its members show someone
        else in."""
        partners = self._partners_of(room.room_id)
        if room.room_id in self._demoted or not partners:
            return
        people = (subjects | set(room.users)) - {self._user_id}
        if has_outsider(people, partners):
            await self._demote(room.room_id)

    async def _demote(self, room_id: str) -> None:
        """A group room from now on: at once here, and in ``m.direct`` for later runs."""
        self._demoted.add(room_id)
        logger.info("%s had a third member: a group room from now on", room_id)
        try:
            await self._update(lambda content: without_room(content, room_id))
        except DirectDataUnavailable as error:
            logger.warning(
                "%s is a group room now, but could not be taken out of m.direct: %s",
                room_id,
                error,
            )

    async def _update(self, change: Callable[[dict[str, Any]], DirectContent | None]) -> None:
        """Read-modify-write of ``m.direct``; ``change`` returns None when nothing changes."""
        async with self._write_lock:
            # Read first: another client of the bot's account may have changed it.
            updated = change(await self._fetch())
            if updated is not None:
                await self._store(updated)

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
