"""Compaction is LanceDB's own: the fragments single writes add are merged every few writes,
the indices take in the new rows, and only the latest version stays (docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.index import IndexedFact, LanceFactIndex
from memory.index.lance import table_folder
from memory.scope import Scope
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
DIMENSION = 8


def _fact(fact_id: int, text: str | None = None) -> IndexedFact:
    vector = np.random.default_rng(fact_id).random(DIMENSION, dtype=np.float32)
    words = text or f"I own {fact_id} stones"
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, words, vector, "m")


async def _unindexed_rows(index: LanceFactIndex) -> dict[str, int]:
    return {
        config.name: int(config.num_unindexed_rows or 0)
        for config in await index._table.list_indices()
    }


async def test_single_writes_leave_few_fragments_that_search_as_one(tmp_path: Path) -> None:
    writes, every = 199, 8
    index = await LanceFactIndex.open(
        tmp_path / "written", dimension=DIMENSION, optimize_every=every, full_text_index=True
    )
    await index.upsert([_fact(n) for n in range(1, 1001)])  # as reconcile loads it
    for fact_id in range(1001, 1001 + writes):
        await index.upsert([_fact(fact_id)])
    whole = await LanceFactIndex.open(tmp_path / "whole", dimension=DIMENSION)
    await whole.upsert([_fact(n) for n in range(1, 1001 + writes)])

    # The load and 199 writes are 25 compactions: each merged the new fragments and indexed
    # their rows.
    assert await index.fragment_count() <= 2
    assert await _unindexed_rows(index) == {"owner_digest_idx": 0, "text_idx": 0}
    assert await index.version_count() == 1
    assert await index.count() == 1000 + writes
    for probe in range(1, 1001 + writes, 97):
        vector = _fact(probe).vector
        assert await index.search(ALICE, vector, limit=6) == await whole.search(
            ALICE, vector, limit=6
        )
    hits = await index.full_text_search(ALICE, f"{1000 + writes}", limit=1)
    assert [hit.fact_id for hit in hits] == [1000 + writes]
    await index.aclose()
    await whole.aclose()


async def test_rows_written_between_compactions_are_searched_all_the_same(
    tmp_path: Path,
) -> None:
    index = await LanceFactIndex.open(
        tmp_path / "index", dimension=DIMENSION, optimize_every=100, full_text_index=True
    )
    await index.upsert([_fact(n) for n in range(1, 501)])
    await index.optimize()
    for fact_id in range(501, 511):  # no compaction yet: ten fragments outside the indices
        await index.upsert([_fact(fact_id)])
    assert await _unindexed_rows(index) == {"owner_digest_idx": 10, "text_idx": 10}
    (nearest,) = await index.search(ALICE, _fact(505).vector, limit=1)
    assert nearest.fact_id == 505
    hits = await index.full_text_search(ALICE, "507", limit=1)
    assert [hit.fact_id for hit in hits] == [507]
    await index.aclose()


async def test_an_erase_after_small_compactions_leaves_no_byte_of_the_fact(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=4)
    await index.upsert([_fact(n) for n in range(1, 2001)])
    await index.upsert([_fact(2001, "zqxjpassvv is my passphrase")])
    for fact_id in range(2002, 2010):
        await index.upsert([_fact(fact_id)])
    assert files_containing(folder, "zqxjpassvv") != []

    await index.erase([2001])

    assert files_containing(folder, "zqxjpassvv") == []
    assert not (table_folder(folder) / "_deletions").exists() or not any(
        (table_folder(folder) / "_deletions").iterdir()
    )
    assert await index.count() == 2008
    assert await index.version_count() == 1
    await index.aclose()
