"""An answer shown on Matrix as the model writes it: one message that grows.

The first part is sent as an ``m.text`` reply as soon as there is text, then replaced by
``m.replace`` edits at a bounded rate (:class:`~bot.streaming.PacedAnswer`; matrix-nio sleeps
out a 429, and the next edit waits for it), so Element shows one message that grows. In an
encrypted room each edit is encrypted like any message (nio keeps the relation in clear, as
the spec asks). Past ``max_message_chars`` the answer goes on in a new message, cut where a
long answer is cut; the last edit leaves the whole answer.
"""

from __future__ import annotations

from adapters.matrix.delivery import Deliverer
from adapters.matrix.formatting import split_message

# Homeservers limit how fast an account may send (Synapse: 0.2 a second, bursts of 10, by
# default): fewer edits than on Discord leave room for the bot's other answers.
EDIT_INTERVAL_SECONDS = 1.5


class MatrixParts:
    """A :class:`~bot.streaming.Display` of one answer in ``room_id``."""

    def __init__(
        self,
        deliverer: Deliverer,
        room_id: str,
        *,
        reply_to_event_id: str | None,
        thread_root_id: str | None,
    ) -> None:
        self._deliverer = deliverer
        self._room_id = room_id
        self._reply_to = reply_to_event_id
        self._thread = thread_root_id
        self._event_ids: list[str] = []
        self._texts: list[str] = []

    async def show(self, text: str) -> None:
        parts = split_message(text, self._deliverer.max_message_chars)
        for number, part in enumerate(parts):
            if number == len(self._event_ids):
                reply_to = self._reply_to if number == 0 else None
                self._event_ids.append(
                    await self._deliverer.send_part(
                        self._room_id, part, reply_to_event_id=reply_to, thread_root_id=self._thread
                    )
                )
                self._texts.append(part)
            elif self._texts[number] != part:
                await self._deliverer.replace(self._room_id, self._event_ids[number], part)
                self._texts[number] = part
        # An answer that became shorter than what was shown (a tools round's words).
        while len(self._event_ids) > max(1, len(parts)):
            await self._deliverer.redact(self._room_id, self._event_ids.pop())
            self._texts.pop()
