"""Who owns a fact and where it may be seen: the privacy rule of the whole product.

A person is ``"<platform>:<user id>"``, a room ``"<platform>:<room id>"`` (DMs:
``"<platform>:dm"``). ``user_room`` (default) sees the owner's facts of this room; ``user``
every room's, except that a DM's facts never surface in a group room.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memory.errors import InvalidScopeError
from memory.text import valid_text

DIRECT_ROOM_ID = "dm"


class ScopeMode(StrEnum):
    USER_ROOM = "user_room"
    USER = "user"


def platform_of(key: str) -> str:
    """The platform prefix of a user or room key; raises if the key is malformed."""
    platform, separator, rest = key.partition(":")
    if not separator or not platform or not rest:
        raise InvalidScopeError(f"expected '<platform>:<id>', got {key!r}")
    if "\x00" in key or (not key.isprintable() and valid_text(key) != key):
        # No platform has such ids, and neither database can store them.
        raise InvalidScopeError(
            f"a key may not contain a NUL character or a lone surrogate, got {key!r}"
        )
    return platform


def direct_room_key(platform: str) -> str:
    """The one room key shared by all of a person's DMs on ``platform``."""
    return f"{platform}:{DIRECT_ROOM_ID}"


@dataclass(frozen=True, slots=True)
class RoomFilter:
    """Which origin rooms are visible: exactly one room, or every room except one."""

    only: str | None = None
    exclude: str | None = None


@dataclass(frozen=True, slots=True)
class Scope:
    """The (owner, room) a fact belongs to, and how far the owner's facts may be seen."""

    owner: str
    room: str
    mode: ScopeMode = ScopeMode.USER_ROOM

    def __post_init__(self) -> None:
        owner_platform = platform_of(self.owner)
        room_platform = platform_of(self.room)
        if owner_platform != room_platform:
            raise InvalidScopeError(
                f"user {self.owner!r} and room {self.room!r} are on different platforms"
            )

    @property
    def platform(self) -> str:
        return platform_of(self.owner)

    @property
    def is_direct(self) -> bool:
        return self.room == direct_room_key(self.platform)

    def visible_rooms(self) -> RoomFilter:
        """The origin rooms whose facts may be recalled from this scope."""
        if self.mode is ScopeMode.USER_ROOM:
            return RoomFilter(only=self.room)
        if self.is_direct:
            return RoomFilter()
        return RoomFilter(exclude=direct_room_key(self.platform))

    def sees(self, owner: str, room: str) -> bool:
        """Whether a fact ``owner`` told in ``room`` may be seen from this scope: the rule
        that the SQL and index filters (``visible_in``, ``scope_where``) put in a query."""
        rooms = self.visible_rooms()
        return owner == self.owner and rooms.only in (None, room) and rooms.exclude != room
