"""The index keeps only its latest version, never pulls files from under a running search,
and can always be rebuilt from SQLite after its cleanup."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import numpy as np

from memory.embedding import HashingEmbedder
from memory.index import IndexedFact, LanceFactIndex
from memory.indexing import index_facts, reconcile
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store

ALICE = Scope("console:alice", "console:room1")
DIMENSION = 16


def _fact(fact_id: int) -> IndexedFact:
    vector = np.random.default_rng(fact_id).random(DIMENSION, dtype=np.float32)
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, f"I own {fact_id} stones", vector, "m")


async def test_compaction_keeps_only_the_latest_version(tmp_path: Path) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=DIMENSION, optimize_every=5)
    await index.upsert([_fact(n) for n in range(1, 2001)])
    for fact_id in range(2001, 2004):
        await index.upsert([_fact(fact_id)])
    assert (await index.space()).versions > 4
    await index.delete([1, 2, 3])  # the fifth write compacts
    space = await index.space()
    assert space.versions == 1
    assert space.reclaimable_bytes < space.live_bytes // 10
    await index.aclose()


async def test_cleanup_never_removes_what_a_running_search_reads(tmp_path: Path) -> None:
    """One writer (this test) and four tasks searching beside it, as the bot runs them."""
    index = await LanceFactIndex.open(
        tmp_path / "index", dimension=DIMENSION, optimize_every=3, full_text_index=True
    )
    await index.upsert([_fact(n) for n in range(1, 3001)])
    stop = asyncio.Event()
    searches = 0

    async def search_all_the_time() -> None:
        nonlocal searches
        while not stop.is_set():
            await index.search(ALICE, _fact(searches % 3000 + 1).vector, model="m", limit=5)
            await index.full_text_search(ALICE, "stones", limit=5)
            searches += 1
            await asyncio.sleep(0)

    readers = [asyncio.create_task(search_all_the_time()) for _ in range(4)]
    try:
        # Every third write compacts and removes the versions the readers may be on.
        for fact_id in range(3001, 3061):
            await index.upsert([_fact(fact_id)])
            if fact_id % 10 == 0:
                await index.erase([fact_id - 3000])
    finally:
        stop.set()
        await asyncio.gather(*readers)  # a search that lost its files raises here
    assert searches > 0
    assert await index.count() == 3054
    assert (await index.space()).versions == 1
    await index.aclose()


async def test_the_index_is_rebuilt_from_sqlite_after_cleanup(store: Store, tmp_path: Path) -> None:
    embedder = HashingEmbedder(dimension=DIMENSION)
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=4)
    facts = await store.write(
        lambda transaction: [transaction.facts.add(ALICE, NewFact(f"fact {n}")) for n in range(40)]
    )
    for fact in facts:
        await index_facts(index, embedder, [fact])
    await store.write(lambda transaction: transaction.facts.erase_ids(ALICE, [facts[0].id]))
    await index.erase([facts[0].id])
    await index.compact()
    expected = await index.indexed_models()
    (vector,) = await embedder.embed(["fact 7"])
    expected_hits = await index.search(ALICE, vector, model="m", limit=5)
    await index.aclose()

    shutil.rmtree(folder)
    rebuilt = await LanceFactIndex.open(folder, dimension=DIMENSION)
    report = await reconcile(store, rebuilt, embedder)

    assert report.missing == 39
    assert await rebuilt.indexed_models() == expected
    assert await rebuilt.search(ALICE, vector, model="m", limit=5) == expected_hits
    await rebuilt.aclose()
