"""Erasing from the LanceDB index: a forgotten fact's words are in no byte under the folder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.index import IndexedFact, LanceFactIndex
from memory.index.lance import TABLE_NAME
from memory.scope import Scope
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
SECRET = "zqxjpassvv"  # no suffix the English stemmer would cut
EARLIER_SECRET = "vvkwoldpassqq"
DIMENSION = 8


def _fact(fact_id: int, text: str) -> IndexedFact:
    vector = np.random.default_rng(fact_id).random(DIMENSION, dtype=np.float32)
    return IndexedFact(fact_id, ALICE.owner, ALICE.room, text, vector, "m")


async def _filled(
    folder: Path, size: int, secret_id: int, *, full_text: bool = False
) -> LanceFactIndex:
    """``size`` facts written in 20 batches (20 fragments before compaction)."""
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, full_text_index=full_text)
    facts = [
        _fact(n, f"{SECRET} is my passphrase" if n == secret_id else f"I own {n} plain stones")
        for n in range(1, size + 1)
    ]
    batch = max(1, size // 20)
    for start in range(0, size, batch):
        await index.upsert(facts[start : start + batch])
    return index


def _table_files(folder: Path, kind: str) -> list[Path]:
    directory = folder / f"{TABLE_NAME}.lance" / kind
    return sorted(directory.iterdir()) if directory.is_dir() else []


async def _full_text_index_bytes(index: LanceFactIndex) -> int:
    (config,) = [c for c in await index._table.list_indices() if c.columns == ["text"]]
    return int(config.size_bytes)


async def _fresh_full_text_index_bytes(folder: Path, size: int, without: int) -> int:
    """The size of a full-text index built over the same facts, the erased one never added."""
    fresh = await _filled(folder, size, secret_id=without)
    await fresh.delete([without])
    await fresh.optimize()
    await fresh.aclose()
    # Built over the rows as they are now (an index built before would hold the deleted one).
    fresh = await LanceFactIndex.open(folder, dimension=DIMENSION, full_text_index=True)
    size_bytes = await _full_text_index_bytes(fresh)
    await fresh.aclose()
    return size_bytes


async def _assert_only_the_latest_version(index: LanceFactIndex, folder: Path) -> None:
    assert (await index.space()).versions == 1
    assert _table_files(folder, "_deletions") == []
    index_folders = {path.name for path in _table_files(folder, "_indices")}
    listed = {config.index_uuid for config in await index._table.list_indices()}
    assert index_folders == listed


@pytest.mark.parametrize("size", [10, 20_000])
@pytest.mark.parametrize("full_text", [False, True], ids=["vectors", "with-full-text-index"])
async def test_erased_words_are_in_no_byte_of_the_index_folder(
    tmp_path: Path, size: int, full_text: bool
) -> None:
    folder = tmp_path / "index"
    secret_id = size // 2 + 1
    index = await _filled(folder, size, secret_id, full_text=full_text)
    if full_text:
        assert await index.full_text_search(ALICE, SECRET, limit=3)
    await index.optimize()
    before = files_containing(folder, SECRET)
    assert any(name.startswith(f"{TABLE_NAME}.lance/data/") for name in before)
    data_files = set(_table_files(folder, "data"))

    await index.erase([secret_id])

    # Every data file is new: no column (the vectors neither) stays in a file of before.
    assert data_files.isdisjoint(_table_files(folder, "data"))
    assert files_containing(folder, SECRET) == []
    await _assert_only_the_latest_version(index, folder)
    assert await index.count() == size - 1
    assert secret_id not in await index.indexed_models()
    (hit,) = await index.search(ALICE, _fact(3, "").vector, model="m", limit=1)
    assert hit.fact_id == 3
    if full_text:
        assert await index.full_text_search(ALICE, SECRET, limit=3) == []
        stones = await index.full_text_search(ALICE, "stones", limit=3)
        assert len(stones) == 3
        # Its tokens are stored as a finite-state transducer, never as plain words: the
        # proof is that no posting of the erased fact is left, as in an index that never
        # saw it (LanceDB keeps deleted documents in the posting lists otherwise).
        reference = await _fresh_full_text_index_bytes(tmp_path / "fresh", size, secret_id)
        assert await _full_text_index_bytes(index) == reference
    await index.aclose()


async def test_erase_also_removes_rows_deleted_before(tmp_path: Path) -> None:
    # The earlier version of a fact left the index by a plain delete (an update replaced
    # it); forgetting the fact must take that version's bytes too.
    folder = tmp_path / "index"
    index = await _filled(folder, 200, secret_id=0)
    earlier, now = f"{EARLIER_SECRET} was my passphrase", f"{SECRET} is it now"
    plain = [_fact(n, f"I own {n} plain stones") for n in range(502, 520)]
    await index.upsert([_fact(500, earlier), _fact(501, now), *plain])
    await index.optimize()
    await index.delete([500])
    # One deleted row in 20 is below compaction's threshold: its bytes stay in the file.
    await index.optimize()
    assert files_containing(folder, EARLIER_SECRET)

    await index.erase([501])

    assert files_containing(folder, EARLIER_SECRET) == []
    assert files_containing(folder, SECRET) == []
    assert await index.count() == 218
    await index.aclose()


async def test_erase_of_unknown_ids_and_on_an_empty_index(tmp_path: Path) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=DIMENSION)
    await index.erase([1, 2])
    await index.erase([])
    assert await index.count() == 0
    await index.upsert([_fact(1, "I own a boat")])
    await index.erase([99])
    assert await index.indexed_models() == {1: "m"}
    await index.aclose()


async def test_the_survivors_stay_searchable_after_reopening(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    index = await _filled(folder, 50, secret_id=7)
    await index.erase([7])
    await index.aclose()
    reopened = await LanceFactIndex.open(folder, dimension=DIMENSION)
    assert await reopened.count() == 49
    (hit,) = await reopened.search(ALICE, _fact(8, "").vector, model="m", limit=1)
    assert hit.fact_id == 8
    await reopened.aclose()
