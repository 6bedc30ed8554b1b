"""Whether a transaction waits for a lock (PostgreSQL), for tests that force one order of
two processes: the test lets one go on only once the other waits."""

from __future__ import annotations

from sqlalchemy import text

from memory.store import Store


async def lock_waited_for(store: Store) -> bool:
    """Some transaction waits for a lock: a person's (advisory), or a row another holds."""
    waiting = text("SELECT count(*) FROM pg_locks WHERE NOT granted")
    async with store.read() as transaction:
        return bool(await transaction.session.scalar(waiting))
