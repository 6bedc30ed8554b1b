"""Several ``mnemo worker`` processes on one real PostgreSQL: claims with a lease, per-person
order, nobody's messages worked on by two processes at once, and a worker killed with
kill -9 whose claims are taken over after the lease (issue 15, item 3).

Real processes (``tests.servers.queue_worker``: the real worker, embedder and database; the
LLM is the instant stand-in of the load benchmark, a test double for a model's judgement).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import URL, select

from memory.embedding import FastEmbedEmbedder
from memory.indexing import reconcile
from memory.records import FactStatus
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.schema import FactEventRow, FactRow, PendingWriteRow
from memory.store.vectors import PgVectorIndex
from memory.write import WriteSettings
from tests.conftest import REPOSITORY_ROOT
from tests.servers.postgres import PostgresServer

pytestmark = pytest.mark.slow

SHORT_LEASE_SECONDS = 4.0
LONG_LEASE_SECONDS = 600.0


@pytest.fixture
async def database(postgres: PostgresServer) -> AsyncIterator[URL]:
    url = await postgres.create_database()
    yield url
    await postgres.drop_database(url)


class Workers:
    def __init__(self, url: URL, directory: Path) -> None:
        self.url = url.render_as_string(hide_password=False)
        self.directory = directory
        self.processes: list[subprocess.Popen[bytes]] = []
        self.calls = directory / "calls.tsv"

    def start(self, *extra: str, lease: float = LONG_LEASE_SECONDS) -> subprocess.Popen[bytes]:
        """A worker; ``lease``: how long its claims last (a claim outlived by a slow write
        on this busy machine is taken over by design, and its message extracted again)."""
        number = len(self.processes)
        command = [sys.executable, "-m", "tests.servers.queue_worker"]
        command += ["--database-url", self.url, "--data-dir", str(self.directory / "data")]
        command += ["--lease", str(lease), "--calls", str(self.calls), *extra]
        with (self.directory / f"worker{number}.log").open("wb") as log:
            process = subprocess.Popen(command, cwd=REPOSITORY_ROOT, stdout=log, stderr=log)
        self.processes.append(process)
        return process

    def stop_all(self) -> list[int]:
        codes = []
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                codes.append(process.wait(timeout=60))
            except subprocess.TimeoutExpired:
                process.kill()
                codes.append(process.wait())
        return codes

    def log(self) -> str:
        return "\n".join(
            path.read_text(errors="replace") for path in sorted(self.directory.glob("*.log"))
        )


@pytest.fixture
def workers(database: URL, tmp_path: Path) -> Iterator[Workers]:
    running = Workers(database, tmp_path)
    yield running
    running.stop_all()


def scope(person: int) -> Scope:
    return Scope(f"console:person{person}", "console:room")


async def enqueue(store: Store, people: int, messages: int) -> None:
    """Each person says where they live, ``messages`` times, in order; the last one holds."""
    now = datetime.now(UTC)

    def queue(transaction: StoreTransaction) -> None:
        for number in range(1, messages + 1):
            for person in range(people):
                transaction.pending.enqueue(
                    scope(person),
                    f"I live in district {person * 100 + number}",
                    message_time=now,
                    now=now,
                    source_message_id=f"m{person}-{number}",
                )

    await store.write(queue)


async def poll(
    check: Callable[[], Awaitable[bool]], seconds: float, failure: str, workers: Workers
) -> None:
    """Until ``check`` holds; after ``seconds`` the test fails with ``failure`` and the
    workers' log (the time limit only keeps a broken run from hanging)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    pytest.fail(f"{failure}:\n" + workers.log()[-3000:])


async def wait_until_empty(store: Store, workers: Workers) -> None:
    async def empty() -> bool:
        return await queued(store) == 0

    await poll(empty, 240, "the queue was not emptied in time", workers)


def facts_and_events(
    transaction: StoreTransaction,
) -> tuple[Sequence[FactRow], Sequence[FactEventRow]]:
    facts = transaction.session.scalars(select(FactRow).order_by(FactRow.id)).all()
    return facts, transaction.session.scalars(select(FactEventRow)).all()


async def check_learned_in_order(store: Store, people: int, messages: int) -> None:
    """Each person's last message is their one active fact, every earlier one superseded by
    the next (the order kept), and every message applied exactly once."""
    facts, events = await store.read(facts_and_events)
    for person in range(people):
        own = [fact for fact in facts if fact.owner == scope(person).owner]
        texts = [fact.text for fact in own]
        expected = [f"I live in district {person * 100 + n}" for n in range(1, messages + 1)]
        assert texts == expected
        assert [fact.status for fact in own] == [FactStatus.SUPERSEDED.value] * (messages - 1) + [
            FactStatus.ACTIVE.value
        ]
    sources = [event.source_message_id for event in events if event.source_message_id]
    assert sorted(sources) == sorted(
        f"m{person}-{number}" for person in range(people) for number in range(1, messages + 1)
    )


def calls_by_person(calls: Path) -> dict[int, list[tuple[int, float, float, int]]]:
    """Extraction calls per person: (pid, start, end, message number), in start order."""
    by_person: dict[int, list[tuple[int, float, float, int]]] = defaultdict(list)
    for line in calls.read_text().splitlines():
        pid, start, end, text = line.split("\t")
        district = int(text.rsplit("district ", 1)[1].split()[0])
        by_person[district // 100].append((int(pid), float(start), float(end), district % 100))
    return {person: sorted(calls, key=lambda call: call[1]) for person, calls in by_person.items()}


async def test_two_workers_share_the_queue_person_by_person_in_order(
    database: URL, workers: Workers, tmp_path: Path
) -> None:
    """More people than one worker takes at once, and the model held until both workers
    hold claims: on a busy machine the first worker up could otherwise drain the queue
    before the second had started (seen twice in 20 runs at load 8-11)."""
    people, messages = WriteSettings().worker_concurrency + 2, 3
    gate = tmp_path / "gate"
    store = await Store.open(database)
    try:
        await enqueue(store, people, messages)
        workers.start("--hold-until", str(gate))
        workers.start("--hold-until", str(gate))
        await wait_for_claimers(store, 2, workers)
        gate.touch()
        await wait_until_empty(store, workers)
        await check_learned_in_order(store, people, messages)
    finally:
        await store.aclose()
    assert workers.stop_all() == [0, 0], workers.log()
    calls = calls_by_person(workers.calls)
    assert len({pid for person in calls.values() for pid, *_ in person}) == 2  # both worked
    for person, person_calls in calls.items():
        assert [number for *_, number in person_calls] == list(range(1, messages + 1))
        for (_, _, end, _), (_, start, _, _) in itertools.pairwise(person_calls):
            assert end <= start, f"person {person}'s messages overlapped: {person_calls}"


async def test_a_killed_workers_claims_are_taken_over_after_the_lease(
    database: URL, workers: Workers
) -> None:
    people, messages = 2, 3
    store = await Store.open(database)
    try:
        await enqueue(store, people, messages)
        stalled = workers.start("--stall-first", lease=SHORT_LEASE_SECONDS)
        claims = await wait_for_claims(store, people, stalled, workers)
        os.kill(stalled.pid, signal.SIGKILL)
        assert stalled.wait(timeout=30) == -signal.SIGKILL
        # The dead worker's rows stay queued and claimed until their lease ends.
        assert await queued(store) == people * messages
        workers.start(lease=SHORT_LEASE_SECONDS)
        await wait_until_empty(store, workers)
        await check_learned_in_order(store, people, messages)
        created = await store.read(
            lambda transaction: transaction.session.scalars(select(FactRow.created_at)).all()
        )
    finally:
        await store.aclose()
    # Nothing was applied before the dead worker's claims ended.
    assert min(created) >= min(claims)


async def wait_for_claimers(store: Store, count: int, workers: Workers) -> None:
    """Until ``count`` workers hold claims."""

    async def claimed() -> bool:
        claimed_by = select(PendingWriteRow.claimed_by).where(
            PendingWriteRow.claimed_by.is_not(None)
        )
        claimers = set(
            await store.read(lambda transaction: transaction.session.scalars(claimed_by).all())
        )
        return len(claimers) >= count

    await poll(claimed, 120, f"{count} workers did not hold claims in time", workers)


async def wait_for_claims(
    store: Store, people: int, process: subprocess.Popen[bytes], workers: Workers
) -> list[datetime]:
    """The end of the claims ``process`` took, once it holds one for every person."""
    claimed = select(PendingWriteRow).where(PendingWriteRow.claimed_by.is_not(None))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, workers.log()
        rows = await store.read(lambda transaction: transaction.session.scalars(claimed).all())
        if len(rows) == people:
            assert all(f":{process.pid}:" in str(row.claimed_by) for row in rows)
            assert sorted(row.source_message_id or "" for row in rows) == [
                f"m{person}-1" for person in range(people)
            ]
            return [row.claimed_until for row in rows if row.claimed_until is not None]
        await asyncio.sleep(0.2)
    pytest.fail("the worker claimed nothing in time:\n" + workers.log()[-3000:])


async def test_reconcile_in_another_process_keeps_the_vectors_workers_commit(
    database: URL, workers: Workers, embedder: FastEmbedEmbedder
) -> None:
    """Reconcile (the scheduled job, or a process's start-up) runs beside the workers: a
    fact they commit between its reading of the facts and of the vectors looked stale, and
    lost its vector, so the person's next message found no fact to update (order broken,
    two places lived in at once). Reconcile runs here again and again while two workers
    drain the queue."""
    people, messages = 8, 12
    store = await Store.open(database)
    try:
        await enqueue(store, people, messages)
        index = await PgVectorIndex.open(store.database, dimension=384)
        workers.start()
        workers.start()
        reconciles = 0
        while await queued(store):
            await reconcile(store, index, embedder)
            reconciles += 1
        await check_learned_in_order(store, people, messages)
        assert (await reconcile(store, index, embedder, dry_run=True)).in_step
    finally:
        await store.aclose()
    assert reconciles > 5, "the queue drained before reconcile could run beside it"
    assert workers.stop_all() == [0, 0], workers.log()


async def queued(store: Store) -> int:
    return await store.read(lambda transaction: transaction.pending.count())
