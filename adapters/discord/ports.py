"""What the Discord adapter needs from the conversation core (``bot.core``), as a port.

The adapter depends on these two calls only, so tests can drive it with a small double and
the real core satisfies it structurally.
"""

from __future__ import annotations

from typing import Protocol

from bot.messages import IncomingMessage, OutgoingMessage


class ConversationCore(Protocol):
    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        """The replies to ``message``; ``[]`` when it is not for the bot."""
        ...

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        """(number, text) of the caller's facts in the message's scope matching ``typed``."""
        ...
