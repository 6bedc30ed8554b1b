"""Recall latency (p50/p95) at 100 and 10,000 facts in one scope, on real SQLite and LanceDB.

    .venv/bin/python -m benchmarks.recall_latency [--sizes 100 10000] [--queries 40]
        [--real-vectors] [--json OUT]

Each query goes through :class:`memory.recall.Recaller` as a reply would: the real
all-MiniLM-L6-v2 embeds the query, LanceDB searches the scope, SQLite turns ids into facts.
Paths: passive (top 6), explicit (pool of 50 at cosine >= 0.1, then the reranker), and both
with hybrid full-text fusion. No cross-encoder weights can be downloaded on the development
machines, so "explicit" runs with its cosine fallback: the cross-encoder's own time (50
query-passage pairs) is not in these numbers.

Fact vectors: 400 template sentences are embedded with the real model; fact ``k`` is template
``k mod 400`` with a number appended and its vector jittered with seeded noise, so the
similarity spread looks like real facts without embedding 10,000 sentences on a shared
2-core machine (``--real-vectors`` embeds every fact instead). Other people's facts are in
the same table (as many again, in other scopes), so the scope prefilter does real work.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np
from sqlalchemy import insert

from memory.embedding import Embedder, FastEmbedEmbedder, Vectors, normalise
from memory.index import IndexedFact, LanceFactIndex
from memory.recall import RecalledFact, Recaller, RecallSettings
from memory.records import FactSource, FactStatus
from memory.scope import Scope
from memory.store import Store, StoreTransaction, utc_now
from memory.store.schema import FactRow

REPOSITORY_ROOT = Path(__file__).resolve().parent.parent
LOCAL_MODEL = REPOSITORY_ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
SCOPE = Scope("console:alice", "console:room1")
OTHERS = [Scope(f"console:user{n}", "console:room1") for n in range(10)]
BATCH = 2_000

SUBJECTS = ["I", "My sister", "My brother", "My partner", "My best friend", "My boss", "My son"]
VERBS = ["likes", "hates", "plays", "visits", "collects", "cooks", "studies", "repairs"]
OBJECTS = [
    "chess on Sundays",
    "old bicycles",
    "Italian food",
    "the piano",
    "mountain villages",
    "jazz records",
    "Japanese novels",
    "vintage cameras",
    "board games",
    "sourdough bread",
]
QUESTIONS = [
    "What does my sister like?", "Do I play the piano?", "Who repairs old bicycles?",
    "What do you remember about my boss?", "Which records does my partner collect?",
    "What does my son study?", "Does my brother cook Italian food?", "what do I hate",
    "Tell me what you know about chess", "Who visits mountain villages?",
]  # fmt: skip


@dataclass(frozen=True)
class Measurement:
    facts: int
    path: str
    p50_ms: float
    p95_ms: float


def templates() -> list[str]:
    sentences = [
        f"{subject} {verb} {thing}"
        for subject, verb, thing in itertools.product(SUBJECTS, VERBS, OBJECTS)
    ]
    return sentences[:400]


async def fact_texts_and_vectors(
    embedder: Embedder, count: int, real_vectors: bool, seed: int
) -> tuple[list[str], Vectors]:
    base = templates()
    texts = [f"{base[k % len(base)]} ({k})" if count > len(base) else base[k] for k in range(count)]
    if real_vectors or count <= len(base):
        return texts, await embedder.embed(texts)
    base_vectors = await embedder.embed(base)
    noise = np.random.default_rng(seed).normal(0.0, 0.03, (count, base_vectors.shape[1]))
    rows = base_vectors[[k % len(base) for k in range(count)]] + noise.astype(np.float32)
    return texts, normalise(rows)


def insert_facts(rows: list[dict[str, object]], transaction: StoreTransaction) -> list[int]:
    """The ids of ``rows``, inserted into the facts table in one statement."""
    result = transaction.session.execute(insert(FactRow).returning(FactRow.id), rows)
    return list(result.scalars().all())


async def fill(
    store: Store, index: LanceFactIndex, embedder: Embedder, size: int, real: bool
) -> None:
    """``size`` facts in SCOPE, and as many again spread over other people's scopes."""
    texts, vectors = await fact_texts_and_vectors(embedder, size, real, seed=size)
    owners = [SCOPE] * size + [OTHERS[k % len(OTHERS)] for k in range(size)]
    all_texts = texts + texts
    all_vectors = np.vstack([vectors, vectors[::-1]])
    created = utc_now()
    for start in range(0, len(all_texts), BATCH):
        stop = start + BATCH
        rows = [
            {
                "owner": scope.owner,
                "room": scope.room,
                "text": text,
                "category": "general",
                "status": FactStatus.ACTIVE.value,
                "source": FactSource.STATED.value,
                "created_at": created,
                "embedding_model": embedder.model_name,
            }
            for scope, text in zip(owners[start:stop], all_texts[start:stop], strict=True)
        ]
        ids = await store.write(partial(insert_facts, rows))
        await index.upsert(
            [
                IndexedFact(fact_id, scope.owner, scope.room, text, vector, embedder.model_name)
                for fact_id, scope, text, vector in zip(
                    ids,
                    owners[start:stop],
                    all_texts[start:stop],
                    all_vectors[start:stop],
                    strict=True,
                )
            ]
        )
    await index.optimize()


Recall = Callable[[Scope, str], Awaitable[list[RecalledFact]]]


async def timed(paths: dict[str, Recall], queries: Sequence[str]) -> dict[str, list[float]]:
    """Milliseconds per query and path; paths take turns, so load spikes hit all alike."""
    for call, question in itertools.product(paths.values(), queries[:3]):
        await call(SCOPE, question)  # warm-up: model load, FTS index build, caches
    durations: dict[str, list[float]] = {name: [] for name in paths}
    for question in queries:
        for name, call in paths.items():
            started = time.perf_counter()
            await call(SCOPE, question)
            durations[name].append((time.perf_counter() - started) * 1000)
    return durations


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def measure(embedder: Embedder, size: int, query_count: int, real: bool) -> list[Measurement]:
    queries = [QUESTIONS[k % len(QUESTIONS)] for k in range(query_count)]
    with tempfile.TemporaryDirectory(prefix="mnemo-recall-bench-") as directory:
        store = await Store.open(Path(directory) / "facts.sqlite3")
        index = await LanceFactIndex.open(Path(directory) / "index", dimension=384)
        try:
            await fill(store, index, embedder, size, real)
            dense = Recaller(store, index, embedder, RecallSettings())
            hybrid = Recaller(store, index, embedder, RecallSettings(hybrid=True))
            paths: dict[str, Recall] = {
                "passive": dense.passive,
                "explicit": dense.lookup,
                "passive + hybrid": hybrid.passive,
                "explicit + hybrid": hybrid.lookup,
            }
            durations = await timed(paths, queries)
            results = [
                Measurement(
                    size,
                    name,
                    round(statistics.median(values), 1),
                    round(percentile(values, 0.95), 1),
                )
                for name, values in durations.items()
            ]
            return results
        finally:
            await index.aclose()
            await store.aclose()


async def query_embedding_ms(embedder: Embedder, query_count: int) -> float:
    durations = []
    for k in range(query_count):
        started = time.perf_counter()
        await embedder.embed([QUESTIONS[k % len(QUESTIONS)]])
        durations.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(durations), 1)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 10_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--real-vectors", action="store_true")
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    embedder = FastEmbedEmbedder(
        MODEL_NAME, model_path=LOCAL_MODEL if LOCAL_MODEL.is_dir() else None
    )
    await embedder.load()
    measurements = []
    for size in arguments.sizes:
        measurements.extend(
            await measure(embedder, size, arguments.queries, arguments.real_vectors)
        )
    embed_ms = await query_embedding_ms(embedder, arguments.queries)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"query embedding alone: p50 {embed_ms} ms ({arguments.queries} queries)")
    print(f"load average at the end (1, 5, 15 min): {load} on {os.cpu_count()} cores")
    print(f"{'facts in scope':>14}  {'path':<20} {'p50 ms':>8} {'p95 ms':>8}")
    for item in measurements:
        print(f"{item.facts:>14}  {item.path:<20} {item.p50_ms:>8} {item.p95_ms:>8}")
    if arguments.json:
        payload = {"query_embedding_p50_ms": embed_ms, "runs": [asdict(m) for m in measurements]}
        arguments.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
