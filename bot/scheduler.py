"""Background maintenance on APScheduler: consolidation, index reconcile, retry of queued
memory writes, purge of old conversation turns and soft-deleted facts, and storage upkeep
(the index compacted to its latest version, the database's free pages given back, copies
made before schema upgrades deleted after their retention).

Jobs are coroutines on the bot's own event loop; they write in short transactions and yield,
so replies are never kept waiting. Intervals come from the ``scheduler`` config section and
each job's last successful run is kept in the database (``scheduler.last_run.<job>``), so a
restart resumes the schedule instead of starting it over or skipping a run. Every job can
also be run by hand (:meth:`MaintenanceScheduler.run_now`).

On PostgreSQL several processes (bots, ``mnemo worker``) schedule the same jobs: a run that
comes due takes the job's advisory lock (:mod:`memory.store.job_election`) and is skipped
if another process holds it or ran the job less than half an interval ago, so each job
runs once across all processes. The queue retry runs in every process (it only wakes that
process's own worker).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Protocol

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.interval import IntervalTrigger

from bot.config import Config
from memory.consolidation import ConsolidationSettings, consolidate
from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.indexing import Reconcilable, reconcile
from memory.llm.base import LanguageModel
from memory.priority import Priority
from memory.store import Store, StoreTransaction, utc_now
from memory.store.job_election import elected
from memory.store.space import give_back_free_pages

log = logging.getLogger(__name__)

LAST_RUN_PREFIX = "scheduler.last_run."
CONSOLIDATION = "consolidation"
RECONCILE = "reconcile"
PENDING_RETRY = "pending_retry"
PURGE = "purge"
STORAGE = "storage"
MEBIBYTE = 2**20


class PendingWriteProcessor(Protocol):
    """The write path's queue (``memory.write`` ``MemoryWriter``)."""

    async def retry_due(self) -> int:
        """Wake the queue worker (returns at once); how many writes are queued."""
        ...


@dataclass(frozen=True, slots=True)
class Job:
    """A named maintenance task; ``run`` returns a one-line summary for the log."""

    name: str
    interval: timedelta
    run: Callable[[], Awaitable[str]]
    # Runs in every process sharing the database, not once across them.
    every_process: bool = False


def last_run_key(name: str) -> str:
    return LAST_RUN_PREFIX + name


async def last_run(store: Store, name: str) -> datetime | None:
    key = last_run_key(name)
    value = await store.read(lambda transaction: transaction.get_setting(key))
    return None if value is None else datetime.fromisoformat(value)


def record_run(transaction: StoreTransaction, *, key: str, started: datetime) -> None:
    transaction.set_setting(key, started.isoformat())


def first_run_time(
    previous: datetime | None, interval: timedelta, now: datetime, startup_delay: timedelta
) -> datetime:
    """One interval after the last run, but never before ``now + startup_delay``: a run
    missed while the bot was down happens soon after start-up, not all at once at boot."""
    due = (previous or now) + interval
    return max(due, now + startup_delay)


class MaintenanceScheduler:
    """Runs :class:`Job`\\s on an ``AsyncIOScheduler`` and records their last runs."""

    def __init__(
        self,
        store: Store,
        jobs: Sequence[Job],
        *,
        startup_delay: timedelta = timedelta(seconds=30),
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.jobs = {job.name: job for job in jobs}
        self.startup_delay = startup_delay
        self.clock = clock
        self._scheduler = AsyncIOScheduler(timezone=UTC)
        self._locks = {name: asyncio.Lock() for name in self.jobs}

    async def start(self) -> None:
        now = self.clock()
        for job in self.jobs.values():
            previous = await last_run(self.store, job.name)
            self._scheduler.add_job(
                self.run_scheduled,
                IntervalTrigger(seconds=job.interval.total_seconds(), timezone=UTC),
                args=[job.name],
                id=job.name,
                next_run_time=first_run_time(previous, job.interval, now, self.startup_delay),
                max_instances=1,
                coalesce=True,
                misfire_grace_time=None,
            )
        self._scheduler.start()

    async def run_scheduled(self, name: str) -> str | None:
        """A scheduled run: skipped (``None``) while another process sharing the database
        runs the job or has just run it."""
        job = self.jobs[name]
        if job.every_process or self.store.database.dialect == "sqlite":
            return await self.run_now(name)
        async with elected(self.store.database, name) as mine:
            if not mine:
                log.debug("scheduled job %s is running in another process", name)
                return None
            previous = await last_run(self.store, name)
            if previous is not None and self.clock() - previous < job.interval / 2:
                log.debug("scheduled job %s ran in another process at %s", name, previous)
                return None
            return await self.run_now(name)

    def next_run_times(self) -> dict[str, datetime]:
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    async def run_now(self, name: str) -> str | None:
        """Run one job now (by hand or on schedule); ``None`` if it failed (logged)."""
        job = self.jobs[name]
        async with self._locks[name]:
            started = self.clock()
            try:
                summary = await job.run()
            except Exception:
                # A failing job must not stop the others or the bot; it runs again next time.
                log.exception("scheduled job %s failed", name)
                return None
            await self.store.write(
                partial(record_run, key=last_run_key(name), started=started),
                priority=Priority.BACKGROUND,
            )
        log.info("scheduled job %s: %s", name, summary)
        return summary

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running)

    async def shutdown(self) -> None:
        """Stop scheduling, then wait for a job still running: it uses the store."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)
            # APScheduler shuts down through call_soon; let it happen before returning.
            await asyncio.sleep(0)
        for lock in self._locks.values():
            async with lock:
                pass


def consolidation_settings(config: Config) -> ConsolidationSettings:
    """The calibrated candidate threshold and k of the write path, used here too."""
    return ConsolidationSettings(
        candidate_threshold=config.memory.candidate_threshold,
        neighbours=config.memory.candidate_limit,
    )


def consolidation_job(
    config: Config,
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    model: LanguageModel | None,
) -> Job:
    async def run() -> str:
        report = await consolidate(store, index, embedder, model, consolidation_settings(config))
        return (
            f"{report.scopes_visited} scopes, {report.pairs_proposed} pairs, "
            f"{len(report.applied)} merged, {report.failed_batches} batches left for later"
        )

    interval = timedelta(minutes=config.scheduler.consolidation_interval_minutes)
    return Job(CONSOLIDATION, interval, run)


def reconcile_job(config: Config, store: Store, index: Reconcilable, embedder: Embedder) -> Job:
    async def run() -> str:
        report = await reconcile(store, index, embedder)
        return f"{report.missing} missing, {report.stale} stale, {report.reembedded} re-embedded"

    return Job(RECONCILE, timedelta(minutes=config.scheduler.reconcile_interval_minutes), run)


def pending_retry_job(config: Config, writer: PendingWriteProcessor) -> Job:
    async def run() -> str:
        # Only a wake-up: waiting here for a slow model would hold up shutdown.
        return f"{await writer.retry_due()} queued, worker woken"

    interval = timedelta(seconds=config.scheduler.pending_retry_interval_seconds)
    return Job(PENDING_RETRY, interval, run, every_process=True)


def purge_job(
    config: Config, store: Store, index: VectorIndex, clock: Callable[[], datetime] = utc_now
) -> Job:
    settings = config.scheduler

    def purge_facts(transaction: StoreTransaction, cutoff: datetime) -> list[int]:
        facts = transaction.facts.admin_purge_deleted_before(cutoff)
        # Deleted facts are not indexed; this only catches a row a crash left behind.
        transaction.index.delete(facts)
        return facts

    async def run() -> str:
        now = clock()
        turn_cutoff = now - timedelta(days=settings.conversation_retention_days)
        turns = await store.write(
            lambda transaction: transaction.turns.purge_older_than(turn_cutoff),
            priority=Priority.BACKGROUND,
        )
        facts = await store.write(
            partial(purge_facts, cutoff=now - timedelta(days=settings.deleted_fact_retention_days)),
            index=index,
            priority=Priority.BACKGROUND,
        )
        return f"{turns} conversation turns and {len(facts)} deleted facts purged"

    return Job(PURGE, timedelta(minutes=settings.purge_interval_minutes), run)


def storage_job(
    config: Config, store: Store, index: Reconcilable, clock: Callable[[], datetime] = utc_now
) -> Job:
    retention = timedelta(days=config.scheduler.upgrade_backup_retention_days)

    async def run() -> str:
        async with store.database.writing(Priority.BACKGROUND):
            await index.optimize()
        freed = await give_back_free_pages(store.database)
        expired = await store.expire_backups(older_than=clock() - retention)
        return (
            f"index compacted; {freed / MEBIBYTE:.1f} MiB of free database pages given back; "
            f"{expired} expired pre-upgrade copies deleted"
        )

    return Job(STORAGE, timedelta(minutes=config.scheduler.storage_interval_minutes), run)


def build_jobs(
    config: Config,
    store: Store,
    index: Reconcilable,
    embedder: Embedder,
    model: LanguageModel | None,
    writer: PendingWriteProcessor | None,
) -> list[Job]:
    """Every maintenance job; the queue retry only when there is a writer to retry with, the
    storage job only for files of our own (PostgreSQL's autovacuum looks after its tables)."""
    jobs = [
        consolidation_job(config, store, index, embedder, model),
        reconcile_job(config, store, index, embedder),
        purge_job(config, store, index),
    ]
    if store.database.dialect == "sqlite":
        jobs.append(storage_job(config, store, index))
    if writer is not None:
        jobs.append(pending_retry_job(config, writer))
    return jobs


def build_maintenance_scheduler(
    config: Config,
    store: Store,
    index: Reconcilable,
    embedder: Embedder,
    model: LanguageModel | None,
    writer: PendingWriteProcessor | None,
) -> MaintenanceScheduler:
    """For the composition root: ``await scheduler.start()`` once the bot runs, and
    ``await scheduler.shutdown()`` before the parts are closed."""
    return MaintenanceScheduler(store, build_jobs(config, store, index, embedder, model, writer))
