"""What the write thread of issue 25 would save: a burst of replies' writes through today's
async writer, against the same statements run as sync jobs by one thread.

    .venv/bin/python -m benchmarks.write_thread_trips [--replies 200] [--slice-ms 0.25]

Each of ``--replies`` replies starts at once: its intake (the turn and its queued write, the
statements of ``TurnRepository.add_new`` and ``PendingWriteRepository.enqueue_unless_paused``),
six slices of ``--slice-ms`` of CPU work on the event loop (the rest of a reply), and its
answer (``INSERT_ANSWER``). "async" writes through ``Store.write`` and ``Store.add_answer``,
as the product does (the writer's turns, shared commits, and for each statement of a job a
trip through the loop to the async driver); "thread" hands each write as one function to a
thread that owns a sync connection and commits the jobs waiting at once together (no
savepoints, no priorities: a sketch of the design, not of its guarantees). Prints reply
latency per mode and round, and the rows written.
"""

from __future__ import annotations

import argparse
import asyncio
import queue
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, event

from memory.pausing import pause_key
from memory.records import Answer, Role
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.conversation import INSERT_ANSWER, INSERT_NEW_TURN
from memory.store.database import _set_sqlite_pragmas
from memory.store.pending import INSERT_PENDING_UNLESS_PAUSED, pending_values

SLICES = 6
ROUNDS = 3
NOW = datetime(2026, 12, 7, tzinfo=UTC)
Job = Callable[[Connection], Any]


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def reply_work(slice_seconds: float) -> None:
    for _ in range(SLICES):
        busy(slice_seconds)
        await asyncio.sleep(0)


def scope_of(number: int) -> Scope:
    return Scope(f"console:p{number}", "console:room")


def intake(scope: Scope, text: str, source: str, transaction: StoreTransaction) -> int:
    """The reply's intake as a ``Store.write`` job: its turn and queued write; the turn's id."""
    turn, _ = transaction.turns.add_new(
        scope.room, scope.owner, text, created_at=NOW, platform_message_id=source
    )
    transaction.pending.enqueue_unless_paused(scope, text, message_time=NOW, now=NOW, source=source)
    return turn.id


async def reply_async(store: Store, number: int, slice_seconds: float) -> float:
    start = time.perf_counter()
    scope, text, source = scope_of(number), f"message {number}", f"m{number}"
    turn_id = await store.write(partial(intake, scope, text, source))
    await reply_work(slice_seconds)
    await store.add_answer(Answer(scope.room, "OK.", scope.owner, NOW, turn_id))
    return time.perf_counter() - start


@dataclass
class WriteThread:
    """The sketch: one thread, one connection, a queue of jobs; jobs waiting at once share
    one commit; each caller's future is resolved on its loop after the commit."""

    path: Path

    def __post_init__(self) -> None:
        self.engine = create_engine(f"sqlite:///{self.path}")
        event.listen(self.engine, "connect", _set_sqlite_pragmas)
        self.jobs: queue.SimpleQueue[tuple[Job, asyncio.Future[Any]] | None] = queue.SimpleQueue()
        self.loop = asyncio.get_running_loop()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    async def write(self, job: Job) -> Any:
        future: asyncio.Future[Any] = self.loop.create_future()
        self.jobs.put((job, future))
        return await future

    def serve(self) -> None:
        with self.engine.connect() as connection:
            while (first := self.jobs.get()) is not None:
                batch = [first]
                while len(batch) < 32 and (following := self.next_waiting()) is not None:
                    batch.append(following)
                with connection.begin():
                    results = [job(connection) for job, _ in batch]
                for (_, future), result in zip(batch, results, strict=True):
                    self.loop.call_soon_threadsafe(future.set_result, result)

    def next_waiting(self) -> tuple[Job, asyncio.Future[Any]] | None:
        try:
            return self.jobs.get_nowait()
        except queue.Empty:
            return None

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()
        self.engine.dispose()


def intake_job(number: int) -> Job:
    def job(connection: Connection) -> int:
        scope, text, source = scope_of(number), f"message {number}", f"m{number}"
        turn = {
            "room": scope.room, "author": scope.owner, "role": Role.USER.value, "text": text,
            "created_at": NOW, "platform_message_id": source, "author_name": None,
            "audience": None, "answer_to": None,
        }  # fmt: skip
        turn_id = int(connection.execute(INSERT_NEW_TURN, turn).scalar_one())
        pending = pending_values(scope, text, NOW, NOW, source, corrects=False)
        paused = {"pause_key": pause_key(scope.owner)}
        connection.execute(INSERT_PENDING_UNLESS_PAUSED, pending | paused)
        return turn_id

    return job


def answer_job(number: int, turn_id: int) -> Job:
    def job(connection: Connection) -> None:
        scope = scope_of(number)
        answer = {
            "room": scope.room, "author": scope.owner, "text": "OK.", "created_at": NOW,
            "answer_to": turn_id, "audience": None,
        }  # fmt: skip
        connection.execute(INSERT_ANSWER, answer)

    return job


async def reply_thread(writer: WriteThread, number: int, slice_seconds: float) -> float:
    start = time.perf_counter()
    turn_id = await writer.write(intake_job(number))
    await reply_work(slice_seconds)
    await writer.write(answer_job(number, turn_id))
    return time.perf_counter() - start


async def one_round(mode: str, replies: int, slice_seconds: float) -> str:
    with tempfile.TemporaryDirectory(prefix="mnemo-write-thread-") as folder:
        path = Path(folder) / "mnemo.sqlite3"
        store = await Store.open(path)
        try:
            if mode == "async":
                runs = (reply_async(store, n, slice_seconds) for n in range(replies))
                seconds = await asyncio.gather(*runs)
            else:
                writer = WriteThread(path)
                try:
                    runs = (reply_thread(writer, n, slice_seconds) for n in range(replies))
                    seconds = await asyncio.gather(*runs)
                finally:
                    writer.close()
            turns = await store.read(
                lambda reading: reading.turns.recent("console:room", limit=10 * replies)
            )
            rows = len(turns)
        finally:
            await store.aclose()
    ms = sorted(second * 1000 for second in seconds)
    p95 = ms[round(0.95 * (len(ms) - 1))]
    return (
        f"{mode:6}  p50 {statistics.median(ms):6.0f} ms  p95 {p95:6.0f} ms  "
        f"max {ms[-1]:6.0f} ms  rows {rows}"
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--slice-ms", type=float, default=0.25)
    arguments = parser.parse_args()
    for _ in range(ROUNDS):
        for mode in ("async", "thread"):
            print(await one_round(mode, arguments.replies, arguments.slice_ms / 1000), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
