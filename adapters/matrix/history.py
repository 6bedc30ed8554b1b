"""How much of a room's history every current member can read, from its history visibility.

With ``shared`` (Matrix's default) or ``world_readable`` every member reads the whole history.
With ``joined`` or ``invited`` a member reads only what was sent after they joined (or were
invited), so what everyone can read begins at the newest membership event of the current
members. Each membership event's time is kept as sync delivers it: from the timeline (before
the messages after it) and from the state part of each sync (all of it in the adapter's first,
``full_state`` sync). A member whose membership event was not seen counts as having arrived
just now, so nothing earlier is shared.
"""

from __future__ import annotations

from datetime import datetime

from nio import MatrixRoom, RoomMemberEvent, SyncResponse

from adapters.matrix.normalise import time_of

READABLE_BY_EVERY_MEMBER = frozenset({"shared", "world_readable"})
PRESENT = frozenset({"join", "invite"})


class MemberHistory:
    def __init__(self) -> None:
        self._arrived_ms: dict[str, dict[str, int]] = {}

    async def on_member(self, room: MatrixRoom, event: RoomMemberEvent) -> None:
        self._record(room.room_id, event)

    async def on_sync(self, response: SyncResponse) -> None:
        for room_id, info in response.rooms.join.items():
            for event in [*info.state, *info.timeline.events]:
                if isinstance(event, RoomMemberEvent):
                    self._record(room_id, event)

    def _record(self, room_id: str, event: RoomMemberEvent) -> None:
        arrivals = self._arrived_ms.setdefault(room_id, {})
        if event.membership in PRESENT:
            known = arrivals.get(event.state_key, 0)
            arrivals[event.state_key] = max(known, event.server_timestamp)
        else:
            arrivals.pop(event.state_key, None)

    def shared_since(self, room: MatrixRoom, now: datetime) -> datetime | None:
        """When the history every current member can read begins; None: all of it."""
        if room.history_visibility in READABLE_BY_EVERY_MEMBER:
            return None
        arrivals = self._arrived_ms.get(room.room_id, {})
        times = [arrivals.get(user) for user in room.users]
        known = [time for time in times if time is not None]
        if not known or len(known) < len(times):
            return now
        return time_of(max(known))
