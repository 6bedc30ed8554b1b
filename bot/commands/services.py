"""What commands are built with: the memory paths, the store, and the core's conversation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.commands.confirmation import Confirmations
from bot.commands.pausing import PauseSwitch
from bot.commands.ports import FactRecall, MemoryWrites
from bot.messages import IncomingMessage
from memory.scope import Scope
from memory.store import Store


class Conversation(Protocol):
    """The core's reply path, for commands that answer like a chat message (``/search``)."""

    @property
    def can_search_web(self) -> bool: ...

    async def answer(
        self, message: IncomingMessage, scope: Scope, text: str, *, forced_query: str | None
    ) -> str: ...


@dataclass(frozen=True, slots=True)
class CommandServices:
    writer: MemoryWrites
    recaller: FactRecall
    store: Store
    pause: PauseSwitch
    confirmations: Confirmations
    conversation: Conversation
    page_size: int = 10
