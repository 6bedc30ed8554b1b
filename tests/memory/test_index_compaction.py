"""Compaction rewrites only the small fragments single writes add, never the large ones: the
bytes written per learned fact stay small however large the index (docs/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import lance
import numpy as np

from memory.index import IndexedFact, LanceFactIndex
from memory.index.lance import COMPACTION_TARGET_ROWS, MERGE_INDICES_EVERY, table_folder
from memory.scope import Scope
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
DIMENSION = 8
BULK = COMPACTION_TARGET_ROWS + 100


def _fact(fact_id: int, text: str | None = None) -> IndexedFact:
    vector = np.random.default_rng(fact_id).random(DIMENSION, dtype=np.float32)
    words = text or f"I own {fact_id} stones"
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, words, vector, "m")


def _segments(folder: Path) -> dict[str, int]:
    """Each index's number of segments."""
    described = lance.dataset(str(table_folder(folder))).describe_indices()
    return {index.name: len(index.segments) for index in described}


def _data_files(folder: Path) -> set[str]:
    return {path.name for path in (table_folder(folder) / "data").iterdir()}


async def test_compaction_leaves_the_large_fragment_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=8)
    await index.upsert([_fact(n) for n in range(1, BULK + 1)])  # as reconcile loads it
    await index.full_text_search(ALICE, "stones", limit=1)
    await index.optimize()
    large = _data_files(folder)
    assert len(large) == 1

    for fact_id in range(BULK + 1, BULK + 25):  # three compactions
        await index.upsert([_fact(fact_id)])

    assert large <= _data_files(folder), "the large fragment was rewritten"
    assert await index.fragment_count() <= 1 + 3  # at most one small one per compaction
    assert await index.version_count() == 1
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
    assert await index.version_count() == 1
    await index.aclose()


async def test_compactions_add_index_segments_that_every_eighth_merges(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=2)
    await index.upsert([_fact(n) for n in range(1, 1001)])
    await index.full_text_search(ALICE, "stones", limit=1)
    await index.optimize()
    assert _segments(folder) == {"owner_digest_idx": 1, "text_idx": 1}

    fact_id = 1000
    for _ in range(MERGE_INDICES_EVERY - 1):  # compactions that only add a segment
        for _ in range(2):
            fact_id += 1
            await index.upsert([_fact(fact_id)])
    assert set(_segments(folder).values()) == {MERGE_INDICES_EVERY}
    hits = await index.full_text_search(ALICE, f"{fact_id - 3}", limit=1)
    assert [hit.fact_id for hit in hits] == [fact_id - 3]
    (nearest,) = await index.search(ALICE, _fact(fact_id - 5).vector, limit=1)
    assert nearest.fact_id == fact_id - 5

    for _ in range(2):  # the eighth compaction merges
        fact_id += 1
        await index.upsert([_fact(fact_id)])
    assert _segments(folder) == {"owner_digest_idx": 1, "text_idx": 1}
    assert await index.count() == fact_id
    assert await index.version_count() == 1
    await index.aclose()
