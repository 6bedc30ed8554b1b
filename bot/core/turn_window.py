"""Which of the recent turns a reply's prompt carries: a window that moves in steps.

The server keeps what a prompt shares from its start with the prompt before (its prompt
cache). The last ``limit`` turns move by two every message, so the first turn, early in the
prompt, would change each time and every turn would be read again. This window starts at a
remembered turn and keeps it while the turns since then fit in ``limit``; when they no longer
do, it starts again with the newest half, so it moves once every ``limit / 2`` turns. It is
remembered per conversation (a person's DM, a group room's audience), in memory only: after
a restart the first window starts anew.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from bot.messages import IncomingMessage
from memory.records import ConversationTurn

# Conversations whose window start is remembered; the least recent are forgotten first.
REMEMBERED = 10_000


def window_key(message: IncomingMessage, room: str) -> str:
    """The conversation whose turns ``message``'s prompt carries."""
    if message.is_direct:
        return f"{room}\n{message.user_key}"
    return f"{room}\n{message.audience or ''}"


class TurnWindows:
    def __init__(self, capacity: int = REMEMBERED) -> None:
        self._capacity = capacity
        self._starts: OrderedDict[str, int] = OrderedDict()

    def window(
        self, key: str, turns: Sequence[ConversationTurn], limit: int
    ) -> list[ConversationTurn]:
        """The part of ``turns`` (the newest ``limit``, oldest first) the prompt carries."""
        ids = [turn.id for turn in turns]
        start = self._starts.get(key)
        if start in ids:
            first = ids.index(start)
        elif len(turns) < limit:
            first = 0
        else:
            first = len(turns) - (limit + 1) // 2
        if first < len(turns):
            self._starts[key] = ids[first]
            self._starts.move_to_end(key)
            while len(self._starts) > self._capacity:
                self._starts.popitem(last=False)
        return list(turns[first:])
