"""The queue worker: one background task that claims queued writes and processes them.

A pass claims the next row of up to ``concurrency`` people and works through each person's
rows in order. A row is completed in the transaction that applies its facts, so it is
applied at most once; a dead worker's row is claimed again after its lease.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from asyncio import FIRST_COMPLETED
from collections.abc import Awaitable, Callable, Collection
from datetime import datetime, timedelta

from memory.priority import Priority, Replies
from memory.records import PendingWrite
from memory.store import Store, StoreTransaction
from memory.write.errors import UnusableModelOutput

log = logging.getLogger(__name__)

# A write waiting out an outage keeps the person's later messages waiting (their order
# matters); one whose error starts so (the model could not answer it) does not, or a single
# odd message would stop all learning.
LETS_LATER_PASS = UnusableModelOutput.__name__

# Processes one claimed row; True if it was applied (False: retried later, or forgotten).
ProcessClaimed = Callable[[PendingWrite, str], Awaitable[bool]]


def new_worker_id() -> str:
    """Host, process and a random part: unique per worker, readable in the database."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class QueueWorker:
    def __init__(
        self,
        store: Store,
        process: ProcessClaimed,
        *,
        lease: timedelta,
        clock: Callable[[], datetime],
        concurrency: int,
        replies: Replies | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("the queue worker needs a concurrency of at least 1")
        self.worker_id = new_worker_id()
        self._store = store
        self._lease = lease
        self._clock = clock
        self._process = process
        self._concurrency = concurrency
        self._replies = replies or Replies()
        self._wakeup = asyncio.Event()
        self._requested = 0
        self._seen = 0
        self._finished = 0
        self._passes_done = asyncio.Condition()
        self._loop: asyncio.Task[None] | None = None
        self._people: set[asyncio.Task[None]] = set()
        self.completed = 0

    @property
    def running(self) -> bool:
        return self._loop is not None and not self._loop.done()

    def start(self, *, release_stale_claims: bool = True) -> None:
        """Start in the background (returns at once); ``release_stale_claims`` first (on
        SQLite, claims found at start-up are a dead process's)."""
        if self._loop is None:
            self._loop = asyncio.create_task(self._run(release_stale_claims))
        self.wake()

    def wake(self) -> None:
        """Ask for a pass over the queue (cheap; many wakes while busy make one more pass)."""
        if self._loop is None:
            self.start()
            return
        self._requested += 1
        self._wakeup.set()

    async def drain(self) -> int:
        """Wake the worker and wait for a whole pass started after this call; how many
        writes were completed meanwhile (tests, benchmarks, the shutdown's grace)."""
        before = self.completed
        self.wake()
        target = self._requested
        async with self._passes_done:
            await self._passes_done.wait_for(lambda: self._finished >= target or not self.running)
        if not self.running and self._loop is not None and not self._loop.cancelled():
            self._loop.result()  # the loop died: show why
        return self.completed - before

    async def aclose(self, *, grace_seconds: float = 0.0) -> None:
        """Stop: give the queue ``grace_seconds`` to finish, then cancel the work still in
        progress (its rows stay queued) and release our claims."""
        if self._loop is None:
            return
        if grace_seconds > 0 and self.running:
            try:
                await asyncio.wait_for(self.drain(), grace_seconds)
            except TimeoutError:
                log.info("stopping the queue worker with writes in progress")
        self._loop.cancel()
        for task in list(self._people):
            task.cancel()
        await asyncio.gather(self._loop, *self._people, return_exceptions=True)
        try:
            released = await self._release_claims(self.worker_id)
        except Exception:
            log.exception("could not release the queue claims of %s", self.worker_id)
            return
        if released:
            log.info("stopped with %d queued writes in progress; they stay queued", released)

    async def _run(self, release_stale_claims: bool) -> None:
        if release_stale_claims:
            await self._release_stale()
        while True:
            await self._wakeup.wait()
            try:
                await self.run_pass()
            except Exception:
                log.exception("the queue worker failed; the rows stay queued for the next wake")
            async with self._passes_done:
                self._finished = self._seen
                self._passes_done.notify_all()

    async def _release_stale(self) -> None:
        try:
            released = await self._release_claims()
        except Exception:
            log.exception("could not release the queue claims left by an earlier run")
            return
        if released:
            log.info("released %d queued writes claimed by an earlier run", released)

    async def run_pass(self) -> None:
        """Process what can be claimed, up to ``concurrency`` people at a time, until nothing
        is left; a wake-up meanwhile (a new message) is served by a free slot at once."""
        running: dict[str, asyncio.Task[None]] = {}
        while True:
            self._wakeup.clear()
            self._seen = self._requested
            while len(running) < self._concurrency:
                pending = await self._claim(skip_owners=running.keys())
                if pending is None:
                    break
                running[pending.owner] = self._spawn(self._person(pending))
            if not running:
                return
            woken = asyncio.ensure_future(self._wakeup.wait())
            try:
                await asyncio.wait([woken, *running.values()], return_when=FIRST_COMPLETED)
            finally:
                woken.cancel()
            for owner, task in list(running.items()):
                if task.done():
                    del running[owner]
                    task.result()  # _person logs every error: this passes a cancellation on

    async def claim(
        self, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        """Claim the next row to process (per owner: the oldest that may go), or ``None``."""
        now = self._clock()
        # A copy: the caller's live view of the people in progress is not the job's to read.
        skipped = frozenset(skip_owners)

        def claim_next(transaction: StoreTransaction) -> PendingWrite | None:
            return transaction.pending.claim_next(
                self.worker_id,
                now=now,
                until=now + self._lease,
                passing_error=LETS_LATER_PASS,
                owner=owner,
                skip_owners=skipped,
            )

        return await self._store.write(claim_next, priority=Priority.BACKGROUND)

    async def _claim(
        self, *, owner: str | None = None, skip_owners: Collection[str] = ()
    ) -> PendingWrite | None:
        """The next row, once no reply is in progress (replies first), or ``None`` also
        when the store fails (logged; the rows stay)."""
        await self._replies.quiet()
        try:
            return await self.claim(owner=owner, skip_owners=skip_owners)
        except Exception:
            log.exception("the queue worker could not read the queue; it retries later")
            return None

    async def _release_claims(self, worker: str | None = None) -> int:
        """Release ``worker``'s claims, or on SQLite every claim (start-up)."""
        if worker is None and self._store.database.dialect == "postgresql":
            return 0
        return await self._store.write(
            lambda transaction: transaction.pending.release_claims(worker),
            priority=Priority.BACKGROUND,
        )

    def _spawn(self, work: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(work)
        self._people.add(task)
        task.add_done_callback(self._people.discard)
        return task

    async def _person(self, first: PendingWrite) -> None:
        """One person's claimed row, then their next ones in order, one at a time."""
        pending: PendingWrite | None = first
        try:
            while pending is not None:
                if await self._process(pending, self.worker_id):
                    self.completed += 1
                pending = await self._claim(owner=first.owner)
        except Exception:
            # The row stays claimed until its lease ends (or the next start-up): not lost.
            log.exception("queued writes of %s failed; they stay queued", first.owner)
