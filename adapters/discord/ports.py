"""What the Discord adapter needs from the conversation core (``bot.core``), as a port.

The adapter depends on these calls only, so tests can drive it with a small double and the
real core satisfies it structurally.
"""

from __future__ import annotations

from typing import Protocol

from bot.messages import IncomingMessage, MessageDeletion, MessageEdit, OutgoingMessage


class ConversationCore(Protocol):
    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        """The replies to ``message``; ``[]`` when it is not for the bot."""
        ...

    async def fact_choices(self, message: IncomingMessage, typed: str) -> list[tuple[int, str]]:
        """(number, text) of the caller's facts in the message's scope matching ``typed``."""
        ...

    async def handle_edit(self, edit: MessageEdit) -> bool:
        """Take an edit as a correction of its message; whether it was."""
        ...

    async def handle_deletion(self, deletion: MessageDeletion) -> bool:
        """Erase a deleted message and what was learned from it alone; whether it was."""
        ...

    async def catch_up(self, message: IncomingMessage) -> bool:
        """Learn from a message sent while the bot was away, without answering it."""
        ...

    async def known_direct_users(self, platform: str) -> list[str]:
        """The user keys of the people with DM turns on ``platform``."""
        ...
