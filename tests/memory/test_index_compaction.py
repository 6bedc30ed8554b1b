"""Compaction merges the fragments single writes add in tiers, never rewriting the large ones
for a few small ones: the bytes written per learned fact stay small however large the index,
and so does the number of fragments a search reads (docs/benchmarks.md)."""

from __future__ import annotations

import math
from pathlib import Path

import lance
import numpy as np

from memory.index import IndexedFact, LanceFactIndex
from memory.index.lance import MERGE_INDICES_EVERY, table_folder
from memory.index.tiers import MERGE_WIDTH
from memory.scope import Scope
from tests.memory.raw_bytes import files_containing
from tests.memory.tier_layout import layout_after_single_writes

ALICE = Scope("console:alice", "console:room1")
DIMENSION = 8
BULK = 8_292


def _fact(fact_id: int, text: str | None = None) -> IndexedFact:
    vector = np.random.default_rng(fact_id).random(DIMENSION, dtype=np.float32)
    words = text or f"I own {fact_id} stones"
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, words, vector, "m")


def _segments(folder: Path) -> dict[str, int]:
    """Each index's number of segments."""
    described = lance.dataset(str(table_folder(folder))).describe_indices()
    return {index.name: len(index.segments) for index in described}


def _unindexed_rows(folder: Path) -> int:
    table = lance.dataset(str(table_folder(folder)))
    (owner_index,) = [
        index for index in table.describe_indices() if index.name == "owner_digest_idx"
    ]
    indexed = {
        fragment_id for segment in owner_index.segments for fragment_id in segment.fragment_ids
    }
    return sum(
        fragment.count_rows()
        for fragment in table.get_fragments()
        if fragment.fragment_id not in indexed
    )


def _data_files(folder: Path) -> set[str]:
    return {path.name for path in (table_folder(folder) / "data").iterdir()}


async def test_compaction_leaves_the_large_fragment_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(
        folder, dimension=DIMENSION, optimize_every=8, full_text_index=True
    )
    await index.upsert([_fact(n) for n in range(1, BULK + 1)])  # as reconcile loads it
    await index.optimize()
    large = _data_files(folder)
    assert len(large) == 1

    for fact_id in range(BULK + 1, BULK + 25):  # three compactions
        await index.upsert([_fact(fact_id)])

    assert large <= _data_files(folder), "the large fragment was rewritten"
    # 8 rows per compaction: 8, 8, 8 side by side (fewer than MERGE_WIDTH of a size class).
    assert await index.fragment_count() == 1 + 3
    assert (await index.space()).versions == 1
    assert await index.count() == BULK + 24
    hits = await index.full_text_search(ALICE, f"{BULK + 20}", limit=1)
    assert [hit.fact_id for hit in hits] == [BULK + 20]
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
    assert await index.count() == 2008
    assert (await index.space()).versions == 1
    await index.aclose()


async def test_new_rows_wait_unindexed_until_every_eighth_compaction(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(
        folder, dimension=DIMENSION, optimize_every=2, full_text_index=True
    )
    await index.upsert([_fact(n) for n in range(1, 1001)])
    await index.optimize()
    assert _segments(folder) == {"owner_digest_idx": 1, "text_idx": 1}
    assert _unindexed_rows(folder) == 0

    fact_id = 1000
    for _ in range(MERGE_INDICES_EVERY - 1):  # compactions that index nothing
        for _ in range(2):
            fact_id += 1
            await index.upsert([_fact(fact_id)])
        assert _segments(folder) == {"owner_digest_idx": 1, "text_idx": 1}
        # Searched all the same, without the indices.
        hits = await index.full_text_search(ALICE, f"{fact_id}", limit=1)
        assert [hit.fact_id for hit in hits] == [fact_id]
        (nearest,) = await index.search(ALICE, _fact(fact_id).vector, model="m", limit=1)
        assert nearest.fact_id == fact_id
    assert _unindexed_rows(folder) == 2 * (MERGE_INDICES_EVERY - 1)

    for _ in range(2):  # the eighth compaction indexes them
        fact_id += 1
        await index.upsert([_fact(fact_id)])
    assert _segments(folder) == {"owner_digest_idx": 1, "text_idx": 1}
    assert _unindexed_rows(folder) == 0
    assert await index.count() == fact_id
    assert (await index.space()).versions == 1
    await index.aclose()


async def test_single_writes_leave_a_few_fragments_that_search_as_one(tmp_path: Path) -> None:
    writes, every = 296, 8
    index = await LanceFactIndex.open(tmp_path / "tiers", dimension=DIMENSION, optimize_every=every)
    for fact_id in range(1, writes + 1):
        await index.upsert([_fact(fact_id)])
    whole = await LanceFactIndex.open(tmp_path / "whole", dimension=DIMENSION)
    await whole.upsert([_fact(n) for n in range(1, writes + 1)])

    layout = layout_after_single_writes(writes, every, MERGE_INDICES_EVERY).fragment_rows
    table = lance.dataset(str(table_folder(tmp_path / "tiers")))
    assert [fragment.count_rows() for fragment in table.get_fragments()] == layout
    assert await whole.fragment_count() == 1
    assert len(layout) <= (MERGE_WIDTH - 1) * (1 + math.log(writes, MERGE_WIDTH))
    for probe in range(1, writes + 1, 37):
        vector = _fact(probe).vector
        tiered = await index.search(ALICE, vector, model="m", limit=6)
        assert tiered == await whole.search(ALICE, vector, model="m", limit=6)
    assert (await index.space()).versions == 1
    await index.aclose()
    await whole.aclose()
