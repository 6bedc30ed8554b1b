"""The index heals itself: broken files are replaced and rebuilt from SQLite, at start-up and
while running, with one log line, and searches fail (recall degrades) only meanwhile."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from memory.embedding import FastEmbedEmbedder
from memory.errors import VectorIndexError
from memory.index import HealingIndex, IndexedFact, IndexRebuildingError, LanceFactIndex
from memory.indexing import index_facts, reconcile
from memory.llm import ScriptedLanguageModel
from memory.records import Fact, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.write import MemoryWriter, WriteSettings
from tests.memory.index_damage import DAMAGE, damage, moved_aside_copies
from tests.memory.paused_parts import PausedEmbedder
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
TEXTS = ["I live in Paris", "My sister is called Anna", "I work as a nurse"]


@dataclass
class Memory:
    store: Store
    embedder: FastEmbedEmbedder
    folder: Path

    async def open_index(self, **options: bool) -> HealingIndex:
        async def refill(rebuilt: LanceFactIndex) -> None:
            await reconcile(self.store, rebuilt, self.embedder)

        return await HealingIndex.open(
            self.folder, dimension=384, refill=refill, replace_broken=options.get("repair", True)
        )

    async def sister_hits(self, index: HealingIndex | LanceFactIndex) -> list[int]:
        (query,) = await self.embedder.embed(["What is my sister's name?"])
        return [
            hit.fact_id
            for hit in await index.search(ALICE, query, model=self.embedder.model_name, limit=1)
        ]


def add_texts(transaction: StoreTransaction) -> None:
    for text in TEXTS:
        transaction.facts.add(ALICE, NewFact(text))


def add_rex(transaction: StoreTransaction) -> Fact:
    return transaction.facts.add(ALICE, NewFact("I have a dog called Rex"))


@pytest.fixture
async def memory(
    store: Store, embedder: FastEmbedEmbedder, tmp_path: Path
) -> AsyncIterator[Memory]:
    await store.write(add_texts)
    memory = Memory(store, embedder, tmp_path / "index")
    index = await memory.open_index()
    await reconcile(store, index, embedder)
    await index.aclose()
    yield memory


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("how", DAMAGE)
async def test_start_up_replaces_a_broken_index_and_rebuilds_it(
    memory: Memory, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    damage(memory.folder, how)

    index = await memory.open_index()
    assert index.needs_refill
    index.start_rebuild()
    await index.wait_rebuilt()

    assert await memory.sister_hits(index) == [2]
    assert await index.count() == 3
    assert moved_aside_copies(memory.folder) == []
    if how != "deleted":
        (warning,) = _warnings(caplog)
        assert "unreadable" in warning and "rebuilding it from the database" in warning
    await index.aclose()


@pytest.mark.parametrize("how", DAMAGE)
async def test_a_running_index_heals_after_its_files_break(
    memory: Memory, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    index = await memory.open_index()
    assert await memory.sister_hits(index) == [2]
    damage(memory.folder, how)
    added = await memory.store.write(add_rex)

    # Searches may still be answered from LanceDB's cache; the next write reaches the disk.
    with pytest.raises(IndexRebuildingError):
        await index_facts(index, memory.embedder, [added])
    with pytest.raises(IndexRebuildingError):
        await memory.sister_hits(index)
    await index.wait_rebuilt()

    assert await memory.sister_hits(index) == [2]
    # The rebuild read the database, which has the fact whose write failed: nothing lost.
    assert set(await index.indexed_models()) == {1, 2, 3, added.id}
    assert moved_aside_copies(memory.folder) == []
    (warning,) = _warnings(caplog)
    assert str(memory.folder) in warning
    await index.aclose()


async def test_tasks_meeting_broken_files_at_once_replace_them_once(memory: Memory) -> None:
    index = await memory.open_index()
    damage(memory.folder, "zeroed")

    await asyncio.gather(*(index.heal_if_broken() for _ in range(5)))

    assert len(index.replacements) == 1
    assert index.rebuilds == 1
    await index.wait_rebuilt()
    assert await memory.sister_hits(index) == [2]
    await index.aclose()


async def test_an_error_of_a_readable_index_is_passed_on_without_a_rebuild(
    memory: Memory,
) -> None:
    index = await memory.open_index()
    wrong_dimension = IndexedFact(9, ALICE.owner, ALICE.room, "x", np.ones(3, np.float32), "m")
    with pytest.raises(VectorIndexError) as raised:
        await index.upsert([wrong_dimension])
    assert not isinstance(raised.value, IndexRebuildingError)
    assert index.replacements == []
    assert await index.count() == 3
    await index.aclose()


async def test_a_forget_during_a_rebuild_is_not_written_back_by_the_refill(
    memory: Memory,
) -> None:
    paused = PausedEmbedder(memory.embedder)

    async def refill(rebuilt: LanceFactIndex) -> None:
        await reconcile(memory.store, rebuilt, paused)

    index = await HealingIndex.open(memory.folder, dimension=384, refill=refill)
    writer = MemoryWriter(
        memory.store, index, memory.embedder, ScriptedLanguageModel(), WriteSettings()
    )
    damage(memory.folder, "zeroed")
    with pytest.raises(IndexRebuildingError):
        await memory.sister_hits(index)
    await paused.entered.wait()  # the refill read all three facts as active

    # The forget does not wait for the rebuild; the refill writes only what is still active.
    assert await writer.forget(ALICE, 2)
    assert index.rebuilding
    paused.gate.set()
    await index.wait_rebuilt()

    assert set(await index.indexed_models()) == {1, 3}
    assert files_containing(memory.folder, "Anna") == []
    await index.aclose()


async def test_a_dry_run_does_not_touch_a_broken_index(memory: Memory) -> None:
    damage(memory.folder, "random bytes")
    before = sorted(path.name for path in memory.folder.rglob("*"))
    with pytest.raises(VectorIndexError, match="mnemo reconcile"):
        await memory.open_index(repair=False)
    assert sorted(path.name for path in memory.folder.rglob("*")) == before


async def test_reconcile_through_the_healing_index_finds_broken_data_files(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    # Only the data files are overwritten: the table still opens, reading it fails.
    index = await memory.open_index()
    for data_file in (memory.folder / "facts.lance" / "data").iterdir():
        data_file.write_bytes(b"\0" * data_file.stat().st_size)

    report = await reconcile(memory.store, index, memory.embedder)

    assert report.in_step
    assert len(index.replacements) == 1
    assert await memory.sister_hits(index) == [2]
    assert len(_warnings(caplog)) == 1
    await index.aclose()


async def test_after_a_readable_error_the_files_are_read_again_only_a_minute_later(
    memory: Memory,
) -> None:
    index = await memory.open_index()
    wrong_dimension = IndexedFact(9, ALICE.owner, ALICE.room, "x", np.ones(3, np.float32), "m")
    with pytest.raises(VectorIndexError):
        await index.upsert([wrong_dimension])  # a full read: readable
    damage(memory.folder, "zeroed")
    added = await memory.store.write(add_rex)

    with pytest.raises(VectorIndexError) as raised:
        await index_facts(index, memory.embedder, [added])
    assert not isinstance(raised.value, IndexRebuildingError)
    assert index.replacements == []

    # Reconcile (scheduled, or by hand) always reads the files.
    await reconcile(memory.store, index, memory.embedder)
    assert len(index.replacements) == 1
    assert set(await index.indexed_models()) == {1, 2, 3, added.id}
    await index.aclose()
