"""The write queue as its worker sees it: claim a row, reschedule a failed one, release claims.

The third step, completing a row, happens inside the transaction that applies its facts
(:func:`memory.write.pipeline.commit`, ``pending.complete_claimed``), so a row is applied at
most once; a row whose worker died is claimed again after its lease (at least once).

One implementation for both databases: a claim is one SQL query for each person's next row
(:meth:`memory.store.pending.PendingWriteRepository.claim_next`), taken on PostgreSQL under
the person's advisory lock with ``SELECT ... FOR UPDATE SKIP LOCKED``, so several processes
(the bot, ``mnemo worker``) can claim from one queue. Start-up releases every claim on
SQLite (one process owns the data folder); on PostgreSQL nobody releases another process's
claims (a dead worker's end with their lease).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import datetime, timedelta

from memory.priority import Priority
from memory.records import PendingWrite
from memory.scope import Scope
from memory.store import EventDraft, Store
from memory.write.errors import UnusableModelOutput

log = logging.getLogger(__name__)

# A write waiting out an outage keeps the person's later messages waiting (their order
# matters); one whose error starts so (the model could not answer it) does not, or a single
# odd message would stop all learning.
LETS_LATER_PASS = UnusableModelOutput.__name__


class WriteQueue:
    """The queue in the SQL store: each step is one short transaction."""

    def __init__(self, store: Store, *, lease: timedelta, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._lease = lease
        self._clock = clock

    async def claim(
        self, worker: str, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        """Claim the next row to process (per owner: the oldest that may go), or ``None``."""
        now = self._clock()
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            return await transaction.pending.claim_next(
                worker,
                now=now,
                until=now + self._lease,
                passing_error=LETS_LATER_PASS,
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
        """Count a failed attempt, retry after ``delay``, release the claim, and record
        ``event`` in the same transaction; nothing (False) if the row is gone or no longer
        ``worker``'s: a forgotten message leaves no trace."""
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            kept = await transaction.pending.reschedule(
                pending.id, worker, error=error, next_attempt_at=self._clock() + delay
            )
            if kept and event is not None:
                await transaction.facts.record_event(Scope(pending.owner, pending.room), event)
            return kept

    async def release_claims(self, worker: str | None = None) -> int:
        """Release ``worker``'s claims, or every claim at the start-up of the one process
        that owns a SQLite database (on PostgreSQL only a worker's own: the others may be
        live processes')."""
        if worker is None and self._store.database.dialect == "postgresql":
            return 0
        async with self._store.transaction(priority=Priority.BACKGROUND) as transaction:
            return await transaction.pending.release_claims(worker)
