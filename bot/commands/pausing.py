"""Whether a person has paused learning (``/memory pause``); persisted in the store
(:mod:`memory.pausing`). The intake of a message reads it in its own transaction; this is
for the commands and for edits."""

from __future__ import annotations

from memory.store import Store


class PauseSwitch:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def is_paused(self, user_key: str) -> bool:
        return await self._store.read(lambda tx: tx.learning_paused(user_key))

    async def set_paused(self, user_key: str, paused: bool) -> None:
        await self._store.write(lambda tx: tx.set_learning_paused(user_key, paused))
