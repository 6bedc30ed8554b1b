"""Insert and scoped-search latency of the fact store (SQLite + LanceDB) at growing sizes.

    .venv/bin/python -m benchmarks.store_latency [--sizes 1000 10000 100000] [--users 100]

Facts are spread evenly over ``--users`` people (one room each). The bulk fill uses random
unit vectors so that 100k facts do not take minutes of embedding; the measured operations
use the real embedding model for the query, as the bot does. Prints p50/p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory.index import IndexedFact, LanceFactIndex
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from tests.conftest import real_embedder

SAMPLES = 100
FILL_BATCH = 2000
DIMENSION = 384


def percentile(values: list[float], share: float) -> float:
    return float(np.percentile(np.asarray(values), share * 100))


def scope_of(user: int) -> Scope:
    return Scope(f"console:user{user}", f"console:room{user}")


def add_batch(
    numbers: range, users: int, vectors: npt.NDArray[np.float32], transaction: StoreTransaction
) -> list[IndexedFact]:
    """Facts ``numbers`` spread over ``users``; their index rows, with ``vectors`` in order."""
    rows = []
    for number, vector in zip(numbers, vectors, strict=True):
        scope = scope_of(number % users)
        fact = transaction.facts.add(scope, NewFact(f"fact number {number}"))
        rows.append(IndexedFact(fact.id, scope.owner, scope.room, fact.text, vector, "bench"))
    return rows


async def fill(store: Store, index: LanceFactIndex, size: int, users: int) -> None:
    generator = np.random.default_rng(7)
    for start in range(0, size, FILL_BATCH):
        count = min(FILL_BATCH, size - start)
        vectors = generator.normal(size=(count, DIMENSION)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = await store.write(partial(add_batch, range(start, start + count), users, vectors))
        await index.upsert(rows)
    await index.optimize()


async def timed(operation: Callable[[int], Awaitable[None]]) -> list[float]:
    durations = []
    for sample in range(SAMPLES):
        started = time.perf_counter()
        await operation(sample)
        durations.append((time.perf_counter() - started) * 1000)
    return durations


async def measure(size: int, users: int) -> dict[str, list[float]]:
    embedder = real_embedder()
    await embedder.embed(["warm up"])
    with tempfile.TemporaryDirectory() as directory:
        store = await Store.open(Path(directory) / "bench.sqlite3")
        index = await LanceFactIndex.open(Path(directory) / "index", dimension=DIMENSION)
        fill_started = time.perf_counter()
        await fill(store, index, size, users)
        fill_seconds = time.perf_counter() - fill_started
        queries = [f"what do you know about topic {n}?" for n in range(SAMPLES)]

        async def insert(sample: int) -> None:
            scope = scope_of(sample % users)
            text = f"I like hobby number {sample}"
            vector = (await embedder.embed([text]))[0]
            fact = await store.write(
                lambda transaction: transaction.facts.add(scope, NewFact(text))
            )
            await index.upsert(
                [IndexedFact(fact.id, scope.owner, scope.room, text, vector, "bench")]
            )

        async def search(sample: int) -> None:
            scope = scope_of(sample % users)
            vector = (await embedder.embed([queries[sample]]))[0]
            hits = await index.search(scope, vector, model="bench", limit=6)
            ids = [hit.fact_id for hit in hits]
            await store.read(lambda transaction: transaction.facts.get_many(scope, ids))

        results = {"insert": await timed(insert), "search": await timed(search)}
        await index.aclose()
        await store.aclose()
    print(f"  filled {size} facts in {fill_seconds:.1f} s", flush=True)
    return results


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--users", type=int, default=100)
    arguments = parser.parse_args()
    print("| facts | users | insert p50 | insert p95 | search p50 | search p95 |")
    print("|---|---|---|---|---|---|")
    for size in arguments.sizes:
        results = await measure(size, arguments.users)
        insert, search = results["insert"], results["search"]
        print(
            f"| {size:,} | {arguments.users} | {statistics.median(insert):.1f} ms "
            f"| {percentile(insert, 0.95):.1f} ms | {statistics.median(search):.1f} ms "
            f"| {percentile(search, 0.95):.1f} ms |",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
