"""The data folder's size against the live data, after a long life of single messages.

    .venv/bin/python -m benchmarks.data_folder_size [--facts 100000] [--people 100]
        [--updates 10000] [--forget-people 10] [--single-forgets 20] [--at-once 1]
        [--measure-at 25000 50000] [--json OUT]

Every fact arrives as its own message through the write path (``MemoryWriter.accept``: the
turn and the queued write; then the queue worker: extraction, candidates from the index,
decision, one commit, the index write, compaction every 32 writes), from ``--people``
people in turn, each message learned before the next is sent (``--at-once N``: N people's
messages are taken in before the worker is waited for, as when N people talk at once; the
worker then commits them in groups). The model is a scripted stand-in that
answers as a good model would (the fact of the message; UPDATE of the fact it replaces;
ADD otherwise); the embedder is the hashing test model (384 dimensions, as the real one):
this measures storage, not language. Then ``--updates`` messages replace earlier facts,
and forgetting takes ``--forget-people`` people's ``forget all`` (their ~1,000 facts each)
and ``--single-forgets`` single ``forget <n>``, through ``MemoryWriter.forget_all`` and
``forget`` (SQLite erase, index erase, WAL truncated). After each phase the scheduled
storage job runs (index compaction, free pages given back), and the folder, the live size
(SQLite pages in use + index rows and indices of the current version) and the search
latency (p50/p95 of 200 scoped searches, as recall does them) are printed, with the
index's fragments and what the process handed to ``write`` during the phase (``wchar``:
SQLite and the index). ``--measure-at`` also measures during the adds (the storage job runs
there too). The people's turns are stored as the bot stores them (the bot keeps them 30
days; no purge runs here).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.embedding import HashingEmbedder
from memory.index import LanceFactIndex
from memory.index.lance import folder_bytes
from memory.llm import CallKind, ChatMessage
from memory.scope import Scope
from memory.store import Store
from memory.store.space import database_space, give_back_free_pages, switch_to_incremental_vacuum
from memory.write.prompts import decision, extraction
from memory.write.prompts.combined import message_of
from memory.write.writer import MemoryWriter, WriteSettings

DIMENSION = 384
EXTRACTION_OPENING = extraction.SYSTEM_PROMPT.split("\n", 1)[0]
THINGS = ["chess", "jazz", "bicycles", "sourdough", "cameras", "novels", "hiking", "tea"]
PLACES = ["Paris", "Lyon", "Berlin", "Porto", "Oslo", "Turin", "Ghent", "Cork"]
SAYS = "Please remember this: "
PROGRESS_EVERY = 2_000
NEW_FACT = re.compile(r"^New fact (\d+): (.*)$")
CANDIDATE = re.compile(r"^\s+(\d+): (.*)$")


def fact_text(number: int, *, version: int = 0) -> str:
    thing, place = THINGS[number % len(THINGS)], PLACES[(number // 8) % len(PLACES)]
    moved = f" (changed {version} times)" if version else ""
    return f"My friend number {number} likes {thing} and lives in {place}{moved}"


def friend_of(text: str) -> str:
    match = re.search(r"friend number (\d+)", text)
    return match.group(1) if match else ""


class StandInModel:
    """Test double for the LLM's judgement, answering as a good model would. Keeps no
    record of its calls (there are hundreds of thousands)."""

    model_name = "stand-in"

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        if messages[0].content.startswith(EXTRACTION_OPENING):
            said = message_of(messages[-1].content).removeprefix(SAYS)
            return json.dumps({"facts": [{"text": said, "category": "other"}]})
        if messages[0].content == decision.SYSTEM_PROMPT:
            return json.dumps({"decisions": decide(messages[-1].content)})
        return "OK."

    async def aclose(self) -> None:
        return None


def decide(shown: str) -> list[dict[str, Any]]:
    """UPDATE the shown fact about the same friend, else ADD."""
    decisions: list[dict[str, Any]] = []
    for line in shown.splitlines():
        if new := NEW_FACT.match(line):
            friend = friend_of(new.group(2))
            decisions.append({"fact": int(new.group(1)), "action": "ADD", "target": None})
        elif (old := CANDIDATE.match(line)) and friend_of(old.group(2)) == friend:
            decisions[-1] |= {"action": "UPDATE", "target": int(old.group(1))}
    return decisions


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    folder_mib: float
    live_mib: float
    database_mib: float
    index_mib: float
    ratio: float
    search_p50_ms: float
    search_p95_ms: float
    fragments: int
    written_mib: float


def bytes_written() -> int:
    """What this process has handed to write() so far (page cache or disk alike)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line")


def person(number: int) -> Scope:
    return Scope(f"console:person{number}", "console:room1")


async def search_ms(index: LanceFactIndex, embedder: HashingEmbedder, people: int) -> list[float]:
    timings = []
    for n in range(200):
        (vector,) = await embedder.embed([fact_text(n * 37)])
        started = time.perf_counter()
        await index.search(person(n % people), vector, model=embedder.model_name, limit=6)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


class Bench:
    def __init__(self, data_dir: Path, store: Store, index: LanceFactIndex, people: int) -> None:
        self.data_dir = data_dir
        self.store = store
        self.index = index
        self.people = people
        self.embedder = HashingEmbedder(dimension=DIMENSION)
        self.writer = MemoryWriter(store, index, self.embedder, StandInModel(), WriteSettings())
        self.writer.start()
        self.started = time.perf_counter()
        self.written_before = bytes_written()

    async def say(self, said: Sequence[tuple[int, str]]) -> None:
        """Each (friend number, text) its own message, of the person the number gives."""
        for number, text in said:
            scope = person(number % self.people)
            await self.writer.accept(scope, SAYS + text, message_time=datetime.now(UTC))
        await self.writer.drain()

    async def forget(self, scope: Scope, fact_id: int | None) -> None:
        if fact_id is None:
            await self.writer.forget_all(scope)
        else:
            await self.writer.forget(scope, fact_id)

    async def measure(self, name: str) -> Phase:
        # What the scheduled storage job does.
        await self.index.optimize()
        await give_back_free_pages(self.store.database)
        database = await database_space(self.store.database)
        assert database is not None
        index = await self.index.space()
        folder = await asyncio.to_thread(folder_bytes, self.data_dir)
        live = database.live_bytes + index.live_bytes
        searches = await search_ms(self.index, self.embedder, self.people)
        phase = Phase(
            name,
            round(time.perf_counter() - self.started),
            round(folder / 2**20, 1),
            round(live / 2**20, 1),
            round(database.live_bytes / 2**20, 1),
            round(index.live_bytes / 2**20, 1),
            round(folder / live, 2),
            round(statistics.median(searches), 1),
            round(statistics.quantiles(searches, n=20)[18], 1),
            await self.index.fragment_count(),
            round((bytes_written() - self.written_before) / 2**20, 1),
        )
        print(phase, flush=True)
        self.started = time.perf_counter()
        self.written_before = bytes_written()
        return phase


async def run(arguments: argparse.Namespace, data_dir: Path) -> list[Phase]:
    store = await Store.open(data_dir / "mnemo.sqlite3")
    await switch_to_incremental_vacuum(store.database)
    index = await LanceFactIndex.open(data_dir / "index", dimension=DIMENSION)
    bench = Bench(data_dir, store, index, arguments.people)
    phases = []
    try:
        at_once = arguments.at_once
        for first in range(0, arguments.facts, at_once):
            numbers = range(first, min(first + at_once, arguments.facts))
            await bench.say([(number, fact_text(number)) for number in numbers])
            if (first + at_once) // PROGRESS_EVERY > first // PROGRESS_EVERY:
                elapsed = time.perf_counter() - bench.started
                print(f"  {numbers[-1] + 1} facts, {elapsed:.0f} s", flush=True)
            if any(first < at <= first + at_once for at in arguments.measure_at):
                phases.append(await bench.measure(f"{numbers[-1] + 1} facts added"))
        phases.append(await bench.measure(f"{arguments.facts} facts added"))
        for first in range(0, arguments.updates, at_once):
            steps = range(first, min(first + at_once, arguments.updates))
            updated = [(step * 7919) % arguments.facts for step in steps]
            versions = [1 + step // arguments.facts for step in steps]
            await bench.say(
                [(n, fact_text(n, version=v)) for n, v in zip(updated, versions, strict=True)]
            )
        phases.append(await bench.measure(f"{arguments.updates} updates"))
        for number in range(arguments.forget_people):
            await bench.forget(person(number), None)
        scope = person(arguments.people - 1)
        listed = await store.read(lambda transaction: transaction.facts.list_in_scope(scope))
        ids = [fact.id for fact in listed]
        for fact_id in ids[: arguments.single_forgets]:
            await bench.forget(scope, fact_id)
        phases.append(await bench.measure("forgets"))
    finally:
        await bench.writer.aclose()
        await index.aclose()
        await store.aclose()
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--updates", type=int, default=10_000)
    parser.add_argument("--forget-people", type=int, default=10)
    parser.add_argument("--single-forgets", type=int, default=20)
    parser.add_argument("--at-once", type=int, default=1, help="messages taken in per drain")
    parser.add_argument(
        "--measure-at",
        type=int,
        nargs="*",
        default=[],
        help="also run the storage job and measure after this many facts are added",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemo-size-") as workdir:
        phases = asyncio.run(run(arguments, Path(workdir)))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(phase) for phase in phases], indent=2))


if __name__ == "__main__":
    main()
