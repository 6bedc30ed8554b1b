"""Whether a person has paused learning (``/memory pause``); persisted in the store.

Paused is per person across all rooms of their platform: someone who says "stop learning
about me" should not have to say it again in every room.
"""

from __future__ import annotations

from memory.store import Store

KEY_PREFIX = "learning_paused:"
PAUSED = "1"
RESUMED = "0"


class PauseSwitch:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def is_paused(self, user_key: str) -> bool:
        async with self._store.read() as tx:
            return await tx.get_setting(KEY_PREFIX + user_key) == PAUSED

    async def set_paused(self, user_key: str, paused: bool) -> None:
        async with self._store.transaction() as tx:
            await tx.set_setting(KEY_PREFIX + user_key, PAUSED if paused else RESUMED)
