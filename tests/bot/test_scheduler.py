"""The maintenance scheduler: real APScheduler, real SQLite and LanceDB, real write path."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest

from bot.config import Config, MemorySettings, SchedulerSettings
from bot.scheduler import (
    CONSOLIDATION,
    PENDING_RETRY,
    PURGE,
    RECONCILE,
    STORAGE,
    Job,
    MaintenanceScheduler,
    build_jobs,
    build_maintenance_scheduler,
    consolidation_job,
    first_run_time,
    last_run,
    purge_job,
)
from memory.embedding.base import Embedder
from memory.index import LanceFactIndex
from memory.llm import ScriptedLanguageModel
from memory.records import Answer, FactStatus, NewFact, Role
from memory.scope import Scope
from memory.store import Store, StoreTransaction, utc_now
from memory.write import MemoryWriter, WriteSettings
from tests.memory.consolidation.helpers import ALICE_DM, GoodJudge, add_facts

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def config_with(**memory: float) -> Config:
    return Config(memory=MemorySettings.model_validate(memory))


async def test_a_job_run_by_hand_records_its_last_run(store: Store) -> None:
    runs: list[str] = []

    async def work() -> str:
        runs.append("ran")
        return "did it"

    scheduler = MaintenanceScheduler(
        store, [Job("work", timedelta(hours=1), work)], clock=lambda: NOW
    )

    assert await scheduler.run_now("work") == "did it"
    assert runs == ["ran"]
    assert await last_run(store, "work") == NOW


async def test_a_failing_job_is_logged_and_not_recorded(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken() -> str:
        raise RuntimeError("disk on fire")

    scheduler = MaintenanceScheduler(store, [Job("broken", timedelta(hours=1), broken)])

    assert await scheduler.run_now("broken") is None
    assert await last_run(store, "broken") is None
    assert "scheduled job broken failed" in caplog.text
    assert "disk on fire" in caplog.text


def test_after_a_restart_the_schedule_continues_from_the_last_run() -> None:
    hour, delay = timedelta(hours=1), timedelta(seconds=30)
    assert first_run_time(NOW - timedelta(minutes=10), hour, NOW, delay) == NOW + timedelta(
        minutes=50
    )
    # Missed while the bot was down: soon after start-up, not at the instant of start-up.
    assert first_run_time(NOW - timedelta(days=2), hour, NOW, delay) == NOW + delay
    assert first_run_time(None, hour, NOW, delay) == NOW + hour


async def test_the_scheduler_reads_last_runs_from_the_database(store: Store) -> None:
    async def noop() -> str:
        return ""

    jobs = [Job("hourly", timedelta(hours=1), noop), Job("daily", timedelta(days=1), noop)]
    await store.write(
        lambda transaction: transaction.set_setting(
            "scheduler.last_run.hourly", (NOW - timedelta(minutes=10)).isoformat()
        )
    )
    scheduler = MaintenanceScheduler(store, jobs, clock=lambda: NOW)

    await scheduler.start()
    try:
        times = scheduler.next_run_times()
    finally:
        await scheduler.shutdown()

    assert times == {"hourly": NOW + timedelta(minutes=50), "daily": NOW + timedelta(days=1)}


async def test_apscheduler_really_runs_the_jobs_on_schedule(store: Store) -> None:
    ran = asyncio.Event()
    count = 0

    async def tick() -> str:
        nonlocal count
        count += 1
        if count == 2:
            ran.set()
        return f"tick {count}"

    scheduler = MaintenanceScheduler(
        store, [Job("tick", timedelta(seconds=0.2), tick)], startup_delay=timedelta(0)
    )
    await scheduler.start()
    try:
        await asyncio.wait_for(ran.wait(), timeout=10)
    finally:
        await scheduler.shutdown()
    assert count >= 2
    assert await last_run(store, "tick") is not None


async def test_intervals_come_from_the_config(
    backend: str, store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    config = Config(
        scheduler=SchedulerSettings(
            consolidation_interval_minutes=7,
            reconcile_interval_minutes=11,
            purge_interval_minutes=13,
            pending_retry_interval_seconds=17,
            storage_interval_minutes=19,
        )
    )
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())

    jobs = {
        job.name: job.interval for job in build_jobs(config, store, index, embedder, None, writer)
    }
    without_writer = build_jobs(config, store, index, embedder, None, None)

    # The storage job looks after SQLite's and LanceDB's files; PostgreSQL has autovacuum.
    storage = {STORAGE: timedelta(minutes=19)} if backend == "sqlite" else {}
    assert jobs == {
        CONSOLIDATION: timedelta(minutes=7),
        RECONCILE: timedelta(minutes=11),
        PURGE: timedelta(minutes=13),
        PENDING_RETRY: timedelta(seconds=17),
        **storage,
    }
    assert PENDING_RETRY not in {job.name for job in without_writer}


async def test_the_consolidation_job_uses_the_configured_threshold(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    mine, wifes = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I drive a Toyota Corolla", "My wife drives a Toyota Corolla"],
    )
    model = ScriptedLanguageModel(fallback=GoodJudge({}))

    # 0.83 is below 0.9: nothing to ask. The state is the database's, so reset it between runs.
    strict = await consolidation_job(
        config_with(candidate_threshold=0.9), store, index, embedder, model
    ).run()
    await store.write(
        lambda transaction: transaction.set_setting(
            "consolidation.last_run", "2000-01-01T00:00:00+00:00"
        )
    )
    loose = await consolidation_job(
        config_with(candidate_threshold=0.5), store, index, embedder, model
    ).run()

    assert strict.startswith("1 scopes, 0 pairs")
    assert loose.startswith("1 scopes, 1 pairs, 0 merged")
    assert len(model.calls) == 1
    assert mine.text in model.calls[0].prompt_text and wifes.text in model.calls[0].prompt_text


async def test_purge_drops_old_turns_and_old_deletions_only(
    store: Store, index: LanceFactIndex
) -> None:
    config = Config(
        scheduler=SchedulerSettings(conversation_retention_days=30, deleted_fact_retention_days=90)
    )
    scope = Scope("console:alice", "console:dm")

    def fill(transaction: StoreTransaction) -> tuple[int, int]:
        """Turns of 40 and 1 days ago; facts deleted 91 and 89 days ago: their ids."""
        for days_ago, text in ((40, "old turn"), (1, "new turn")):
            transaction.turns.add(
                "console:dm",
                Role.USER,
                text,
                author="console:alice",
                created_at=NOW - timedelta(days=days_ago),
            )
        old = transaction.facts.add(scope, NewFact("I play chess"))
        transaction.facts.set_status(
            scope, old.id, FactStatus.DELETED, valid_to=NOW - timedelta(days=91)
        )
        young = transaction.facts.add(scope, NewFact("I play golf"))
        transaction.facts.set_status(
            scope, young.id, FactStatus.DELETED, valid_to=NOW - timedelta(days=89)
        )
        return old.id, young.id

    old, young = await store.write(fill)

    summary = await purge_job(config, store, index, clock=lambda: NOW).run()

    assert summary == "1 conversation turns and 1 deleted facts purged"
    turns = await store.read(lambda transaction: transaction.turns.recent("console:dm", limit=10))
    assert [turn.text for turn in turns] == ["new turn"]
    assert await store.read(lambda transaction: transaction.facts.get(scope, old)) is None
    assert await store.read(lambda transaction: transaction.facts.get(scope, young)) is not None


async def test_purge_takes_the_answers_with_the_turns_they_answer(
    store: Store, index: LanceFactIndex
) -> None:
    config = Config(scheduler=SchedulerSettings(conversation_retention_days=30))

    def ask_and_answer(transaction: StoreTransaction) -> None:
        asked = transaction.turns.add(
            "console:dm",
            Role.USER,
            "a question from long ago",
            author="console:alice",
            created_at=NOW - timedelta(days=31),
        )
        # Answered a day later (a slow model, a late catch-up): younger than the cutoff.
        transaction.turns.add_answer(
            Answer(
                "console:dm",
                "its answer",
                author="console:alice",
                created_at=NOW - timedelta(days=29),
                answer_to=asked.id,
            )
        )

    await store.write(ask_and_answer)

    await purge_job(config, store, index, clock=lambda: NOW).run()

    turns = await store.read(lambda transaction: transaction.turns.recent("console:dm", limit=10))
    assert turns == []


async def test_the_retry_job_processes_writes_queued_during_an_outage(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    extraction = json.dumps(
        {"facts": [{"text": "I live in Berlin", "category": "location", "valid_from": None}]}
    )
    model = ScriptedLanguageModel([extraction])
    writer = MemoryWriter(store, index, embedder, model, WriteSettings())
    writer.start()
    assert await writer.drain() == 0  # the worker runs, and finds nothing to do
    # Queued by an earlier run: nothing wakes the worker but the scheduled retry.
    await store.write(
        lambda transaction: transaction.pending.enqueue(
            ALICE_DM,
            "I live in Berlin",
            message_time=utc_now(),
            now=utc_now() - timedelta(minutes=5),
        )
    )
    config = Config()
    (job,) = [
        job
        for job in build_jobs(config, store, index, embedder, model, writer)
        if job.name == PENDING_RETRY
    ]
    try:
        assert await job.run() == "1 queued, worker woken"
        for _ in range(200):
            if await store.read(lambda transaction: transaction.pending.count()) == 0:
                break
            await asyncio.sleep(0.05)
    finally:
        await writer.aclose()
    assert await store.read(lambda transaction: transaction.pending.count()) == 0
    facts = await store.read(lambda transaction: transaction.facts.list_in_scope(ALICE_DM))
    assert [fact.text for fact in facts] == ["I live in Berlin"]


async def test_the_composition_root_gets_every_job_on_the_schedule(
    backend: str, store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())
    scheduler = build_maintenance_scheduler(Config(), store, index, embedder, None, writer)

    await scheduler.start()
    try:
        names = set(scheduler.next_run_times())
    finally:
        await scheduler.shutdown()

    storage = {STORAGE} if backend == "sqlite" else set()
    assert names == {CONSOLIDATION, RECONCILE, PURGE, PENDING_RETRY, *storage}
