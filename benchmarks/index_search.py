"""Scoped search through the LanceDB index while facts are learned one at a time.

    PYTHONPATH=CODE .venv/bin/python benchmarks/index_search.py [--sizes 1000 100000]
        [--people 100] [--messages 300] [--no-scope-cache] [--json OUT]

Runs against the ``memory`` package that ``PYTHONPATH`` puts first, so that two versions
of the code can be measured side by side in one session (this file imports nothing else of
the project). A table of ``size`` facts (384 dimensions, ``--people`` people with one room
each, seeded random vectors), bulk-loaded in batches of 5,000 and compacted as reconcile
leaves it; then ``--messages`` messages as the bot handles them: three searches of one
person's scope (recall, then the candidates of two facts; top 6) and one learned fact
written into that scope (its own ``upsert``, compaction every 32 writes included). Printed
per size: the searches' p50/p95 (and the first search of each message's, which a scope cache
cannot answer from memory after a restart), the writes' p50/p95/max, and the bytes the
process handed to ``write`` per learned fact (``wchar``). ``--no-scope-cache`` turns off the
scope cache of code that has one (0e8e50a).
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.index import IndexedFact, LanceFactIndex
from memory.scope import Scope

DIMENSION = 384
BATCH = 5_000
SEARCHES_PER_MESSAGE = 3


@dataclass(frozen=True)
class Measurement:
    facts: int
    scope_cache: bool
    search_p50_ms: float
    search_p95_ms: float
    first_search_p50_ms: float
    first_search_p95_ms: float
    write_p50_ms: float
    write_p95_ms: float
    write_max_ms: float
    kib_per_learned_fact: float


def person(number: int) -> Scope:
    return Scope(f"console:person{number}", "console:room1")


def fact(fact_id: int, people: int, vector: np.ndarray) -> IndexedFact:
    scope = person(fact_id % people)
    return IndexedFact(fact_id, scope.owner, scope.room, f"fact {fact_id}", vector, "m")


def bytes_written() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18]


def search_options() -> dict[str, Any]:
    """The query vector's model, for code that searches one model's rows (since 0e8e50a)."""
    return {"model": "m"} if "model" in inspect.signature(LanceFactIndex.search).parameters else {}


def has_scope_cache() -> bool:
    return "scope_cache_rows" in inspect.signature(LanceFactIndex.open).parameters


async def open_index(folder: Path, scope_cache: bool) -> LanceFactIndex:
    if has_scope_cache() and not scope_cache:
        opened: LanceFactIndex = await LanceFactIndex.open(
            folder, dimension=DIMENSION, scope_cache_rows=0
        )
        return opened
    return await LanceFactIndex.open(folder, dimension=DIMENSION)


async def measure(
    folder: Path, size: int, people: int, messages: int, scope_cache: bool
) -> Measurement:
    index = await open_index(folder, scope_cache)
    rng = np.random.default_rng(size)
    for start in range(0, size, BATCH):
        count = min(BATCH, size - start)
        vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
        await index.upsert([fact(start + n, people, vectors[n]) for n in range(count)])
    await index.optimize()
    searches, firsts, writes = [], [], []
    written = 0
    for number in range(messages):
        scope_number = int(rng.integers(people))
        for search in range(SEARCHES_PER_MESSAGE):
            query = rng.standard_normal(DIMENSION, dtype=np.float32)
            started = time.perf_counter()
            await index.search(person(scope_number), query, limit=6, **search_options())
            elapsed = (time.perf_counter() - started) * 1000
            searches.append(elapsed)
            if search == 0:
                firsts.append(elapsed)
        fact_id = size + number * people + scope_number
        learned = fact(fact_id, people, rng.standard_normal(DIMENSION, dtype=np.float32))
        before, started = bytes_written(), time.perf_counter()
        await index.upsert([learned])
        writes.append((time.perf_counter() - started) * 1000)
        written += bytes_written() - before
    await index.aclose()
    return Measurement(
        size,
        scope_cache and has_scope_cache(),
        round(statistics.median(searches), 2),
        round(p95(searches), 2),
        round(statistics.median(firsts), 2),
        round(p95(firsts), 2),
        round(statistics.median(writes), 1),
        round(p95(writes), 1),
        round(max(writes), 1),
        round(written / messages / 1024, 1),
    )


async def main_async(arguments: argparse.Namespace) -> list[Measurement]:
    results = []
    with tempfile.TemporaryDirectory(prefix="mnemo-index-search-") as directory:
        for size in arguments.sizes:
            folder = Path(directory) / f"index-{size}"
            result = await measure(
                folder, size, arguments.people, arguments.messages, not arguments.no_scope_cache
            )
            print(result, flush=True)
            results.append(result)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--no-scope-cache", action="store_true")
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    results = asyncio.run(main_async(arguments))
    if arguments.json is not None:
        arguments.json.write_text(json.dumps([asdict(result) for result in results], indent=2))


if __name__ == "__main__":
    main()
