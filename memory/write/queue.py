"""The write queue as its worker sees it: claim a row, reschedule a failed one, release claims.

The third step, completing a row, happens inside the transaction that applies its facts
(:func:`memory.write.pipeline.commit`, ``pending.complete_claimed``), so a row is applied at
most once; a row whose worker died is claimed again after its lease (at least once).

:class:`StoreWriteQueue` is the SQLite implementation (one process per data folder, so
start-up may release every claim). :class:`SharedWriteQueue` is PostgreSQL's, where several
processes (the bot, ``mnemo worker``) claim from one queue: each person's claim is taken
under their advisory lock, the row with ``SELECT ... FOR UPDATE SKIP LOCKED``, and nobody
releases another process's claims (a dead worker's end with their lease).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import Protocol

from memory.priority import Priority
from memory.records import PendingWrite
from memory.scope import Scope
from memory.store import EventDraft, Store
from memory.write.errors import UnusableModelOutput

log = logging.getLogger(__name__)


class WriteQueue(Protocol):
    async def claim(
        self, worker: str, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        """Claim the next row to process (per owner: the oldest that may go), or ``None``."""
        ...

    async def reschedule(
        self,
        pending: PendingWrite,
        worker: str,
        *,
        error: str,
        delay: timedelta,
        event: EventDraft | None = None,
    ) -> bool:
        """Count a failed attempt, retry after ``delay``, release the claim, and record
        ``event`` in the same transaction; nothing (False) if the row is gone or no longer
        ``worker``'s: a forgotten message leaves no trace."""
        ...

    async def release_claims(self, worker: str | None = None) -> int:
        """Release ``worker``'s claims, or every claim (start-up of a single process)."""
        ...


# The errors of writes that let the person's later messages go first (see holds_back_later).
LETS_LATER_PASS = UnusableModelOutput.__name__


def holds_back_later(pending: PendingWrite) -> bool:
    """A write waiting out an outage keeps later messages waiting (their order matters); one
    the model could not answer does not, or a single odd message would stop all learning."""
    return not (pending.last_error or "").startswith(LETS_LATER_PASS)


class StoreWriteQueue:
    """The queue in the SQL store: each step is one short transaction."""

    def __init__(self, store: Store, *, lease: timedelta, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._lease = lease
        self._clock = clock

    async def claim(
        self, worker: str, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        now = self._clock()
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            return await transaction.pending.claim_next(
                worker,
                now=now,
                until=now + self._lease,
                holds_back=holds_back_later,
                owner=owner,
                skip_owners=skip_owners,
            )

    async def reschedule(
        self,
        pending: PendingWrite,
        worker: str,
        *,
        error: str,
        delay: timedelta,
        event: EventDraft | None = None,
    ) -> bool:
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            kept = await transaction.pending.reschedule(
                pending.id, worker, error=error, next_attempt_at=self._clock() + delay
            )
            if kept and event is not None:
                await transaction.facts.record_event(Scope(pending.owner, pending.room), event)
            return kept

    async def release_claims(self, worker: str | None = None) -> int:
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            return await transaction.pending.release_claims(worker)


class SharedWriteQueue(StoreWriteQueue):
    """The queue in a database several processes claim from (PostgreSQL)."""

    async def claim(
        self, worker: str, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        now = self._clock()
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            return await transaction.pending.claim_next_shared(
                worker,
                now=now,
                until=now + self._lease,
                passing_error=LETS_LATER_PASS,
                owner=owner,
                skip_owners=skip_owners,
            )

    async def release_claims(self, worker: str | None = None) -> int:
        """Only ``worker``'s own: the other claims may be live processes' (a dead one's
        end with its lease)."""
        if worker is None:
            return 0
        return await super().release_claims(worker)


def queue_for(store: Store, *, lease: timedelta, clock: Callable[[], datetime]) -> WriteQueue:
    """The queue implementation the store's database needs."""
    if store.database.dialect == "postgresql":
        return SharedWriteQueue(store, lease=lease, clock=clock)
    return StoreWriteQueue(store, lease=lease, clock=clock)
