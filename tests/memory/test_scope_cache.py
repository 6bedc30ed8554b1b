"""The scope cache of the LanceDB index: the same answers as LanceDB's own search, never a
row of another scope, and never a row that a write changed or removed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memory.errors import VectorIndexError
from memory.index import IndexedFact, LanceFactIndex, ScoredFactId
from memory.index.scope_cache import FactIds, Matrix, ScopeVectorCache
from memory.scope import Scope, ScopeMode

ALICE_DM = Scope("console:alice", "console:dm")
ALICE_ROOM = Scope("console:alice", "console:room1")
ALICE_EVERYWHERE = Scope("console:alice", "console:dm", ScopeMode.USER)  # every room of hers
ALICE_BUT_DM = Scope("console:alice", "console:room1", ScopeMode.USER)  # all but her DM
BOB_DM = Scope("console:bob", "console:dm")
HOSTILE = Scope("console:' OR 1=1 --", "console:dm")
DIMENSION = 32


def unit(seed: int) -> npt.NDArray[np.float32]:
    vector = np.random.default_rng(seed).standard_normal(DIMENSION).astype(np.float32)
    return vector / np.linalg.norm(vector)


def fact(fact_id: int, scope: Scope, seed: int | None = None, model: str = "m") -> IndexedFact:
    vector = unit(fact_id if seed is None else seed)
    return IndexedFact(fact_id, scope.owner, scope.room, f"fact {fact_id}", vector, model)


async def open_index(path: Path, rows: int) -> LanceFactIndex:
    return await LanceFactIndex.open(path, dimension=DIMENSION, scope_cache_rows=rows)


async def filled(path: Path, rows: int = 10_000) -> LanceFactIndex:
    index = await open_index(path, rows)
    scopes = [ALICE_DM, ALICE_ROOM, BOB_DM, HOSTILE]
    await index.upsert(
        [fact(number * 100 + k, scope) for number, scope in enumerate(scopes, 1) for k in range(40)]
    )
    return index


def ids(hits: list[ScoredFactId]) -> list[int]:
    return [hit.fact_id for hit in hits]


async def not_loaded(scope: Scope, model: str, limit: int) -> tuple[FactIds, Matrix]:
    raise AssertionError("the scope's rows were loaded again")


async def test_cached_answers_equal_lancedb_search(tmp_path: Path) -> None:
    cached = await filled(tmp_path / "cached")
    plain = await filled(tmp_path / "plain", rows=0)  # caches nothing: LanceDB searches
    try:
        for scope in (ALICE_DM, ALICE_ROOM, BOB_DM, HOSTILE, ALICE_EVERYWHERE):
            for seed, limit, floor in [(1, 6, None), (2, 50, 0.1), (3, 5, 0.3), (4, 200, None)]:
                query = unit(10_000 + seed)
                expected = await plain.search(
                    scope, query, model="m", limit=limit, min_similarity=floor
                )
                got = await cached.search(
                    scope, query, model="m", limit=limit, min_similarity=floor
                )
                assert ids(got) == ids(expected)
                assert [h.similarity for h in got] == pytest.approx(
                    [h.similarity for h in expected], abs=1e-5
                )
        assert cached.scope_cache.misses == 5  # each scope loaded once, then served from memory
        assert await plain.scope_cache.rows(ALICE_DM, "m", not_loaded) is None  # holds nothing
    finally:
        await cached.aclose()
        await plain.aclose()


async def test_a_warm_cache_never_serves_another_scope(tmp_path: Path) -> None:
    index = await filled(tmp_path / "index")
    # Every scope holds the same vectors: only the scope can tell them apart.
    await index.upsert([fact(900 + k, scope, seed=7) for k, scope in enumerate([ALICE_DM, BOB_DM])])
    await index.upsert([fact(902, HOSTILE, seed=7), fact(903, ALICE_ROOM, seed=7)])
    query = unit(7)
    try:
        for _ in range(2):  # the first search fills the cache, the second is served by it
            assert ids(await index.search(ALICE_DM, query, model="m", limit=1)) == [900]
            assert ids(await index.search(BOB_DM, query, model="m", limit=1)) == [901]
            assert ids(await index.search(HOSTILE, query, model="m", limit=1)) == [902]
            assert ids(await index.search(ALICE_ROOM, query, model="m", limit=1)) == [903]
        everything = await index.search(HOSTILE, query, model="m", limit=1000)
        assert {hit.fact_id // 100 for hit in everything} == {4, 9}
        assert {hit.fact_id for hit in everything if hit.fact_id >= 900} == {902}
        # "user" mode: Alice's facts follow her into group rooms, but her DM facts do not.
        in_room = ids(await index.search(ALICE_BUT_DM, query, model="m", limit=1000))
        assert 903 in in_room and 900 not in in_room
        assert not [i for i in in_room if i // 100 in (1, 3, 4) or i in (901, 902)]
        assert index.scope_cache.misses == 5  # the second round was served from memory
    finally:
        await index.aclose()


async def test_every_write_is_seen_by_the_next_search(tmp_path: Path) -> None:
    index = await filled(tmp_path / "index")
    query = unit(5)
    try:
        await index.search(ALICE_DM, query, model="m", limit=5)  # warm
        await index.upsert([fact(500, ALICE_DM, seed=5)])
        assert ids(await index.search(ALICE_DM, query, model="m", limit=1)) == [500]
        await index.upsert([IndexedFact(500, ALICE_DM.owner, ALICE_DM.room, "x", unit(6), "m")])
        assert ids(await index.search(ALICE_DM, unit(6), model="m", limit=1)) == [500]
        assert 500 not in ids(await index.search(ALICE_DM, query, model="m", limit=1))
        await index.delete([500])
        assert 500 not in ids(await index.search(ALICE_DM, unit(6), model="m", limit=100))
        await index.search(ALICE_DM, query, model="m", limit=5)  # warm again
        await index.erase([101])
        assert 101 not in ids(await index.search(ALICE_DM, unit(101), model="m", limit=100))
        assert len(await index.search(ALICE_DM, query, model="m", limit=100)) == 39
    finally:
        await index.aclose()


async def test_a_write_updates_the_cached_scopes_without_reloading_them(tmp_path: Path) -> None:
    index = await filled(tmp_path / "index")
    query = unit(777)
    try:
        await index.search(ALICE_DM, query, model="m", limit=5)
        await index.search(BOB_DM, query, model="m", limit=5)
        await index.upsert([fact(777, BOB_DM)])
        misses_before = index.scope_cache.misses
        assert 777 not in ids(await index.search(ALICE_DM, query, model="m", limit=100))
        assert ids(await index.search(BOB_DM, query, model="m", limit=1)) == [777]
        assert index.scope_cache.misses == misses_before  # both served from memory
    finally:
        await index.aclose()


SCOPES = [
    ALICE_DM,
    ALICE_ROOM,
    BOB_DM,
    HOSTILE,
    ALICE_EVERYWHERE,
    ALICE_BUT_DM,
    Scope("console:bob", "console:room1"),
]


async def test_after_any_writes_the_cache_answers_as_lancedb_does(tmp_path: Path) -> None:
    """Rows added, replaced (also moved to another room or owner, or re-embedded by another
    model of the same dimension) and deleted while every scope is cached: each scope's
    answers stay exactly LanceDB's own, never another's row, never another model's."""
    cached = await filled(tmp_path / "cached")
    plain = await filled(tmp_path / "plain", rows=0)
    models = ("m", "test/other-model")
    model_of = {number * 100 + k: "m" for number in range(1, 5) for k in range(40)}
    rng = np.random.default_rng(16)
    try:
        for step in range(12):
            for scope in SCOPES:  # every scope cached before the write, for both models
                for model in models:
                    await cached.search(scope, unit(1), model=model, limit=1)
            writes = [
                fact(
                    int(fact_id),
                    SCOPES[int(rng.integers(len(SCOPES)))],
                    seed=1000 * step + k,
                    model=models[int(rng.integers(len(models)))],
                )
                for k, fact_id in enumerate(rng.choice(np.arange(100, 520), 6, replace=False))
            ]
            model_of.update((write.fact_id, write.model) for write in writes)
            misses_before = cached.scope_cache.misses
            for index in (cached, plain):
                await index.upsert(writes)
                if step % 4 == 3:
                    await index.delete([writes[0].fact_id])
            for scope in SCOPES:
                for query, model in [(unit(1000 * step + k), models[k % 2]) for k in range(4)]:
                    expected = await plain.search(scope, query, model=model, limit=1000)
                    got = await cached.search(scope, query, model=model, limit=1000)
                    assert {model_of[fact_id] for fact_id in ids(expected)} <= {model}
                    assert ids(got) == ids(expected), (step, scope)
                    assert [h.similarity for h in got] == pytest.approx(
                        [h.similarity for h in expected], abs=1e-5
                    )
            # Upserts and deletes update the cached scopes: none was loaded again.
            assert cached.scope_cache.misses == misses_before
    finally:
        await cached.aclose()
        await plain.aclose()


async def test_a_failed_write_drops_its_owners_entries(tmp_path: Path) -> None:
    index = await filled(tmp_path / "index")
    try:
        await index.search(ALICE_DM, unit(1), model="m", limit=5)
        await index.search(BOB_DM, unit(1), model="m", limit=5)
        wrong = IndexedFact(600, BOB_DM.owner, BOB_DM.room, "x", np.ones(3, np.float32), "m")
        with pytest.raises(VectorIndexError):
            await index.upsert([wrong])
        misses_before = index.scope_cache.misses
        await index.search(ALICE_DM, unit(1), model="m", limit=5)
        assert index.scope_cache.misses == misses_before
        await index.search(BOB_DM, unit(1), model="m", limit=5)
        assert index.scope_cache.misses == misses_before + 1  # Bob's scope read again
    finally:
        await index.aclose()


@pytest.mark.parametrize("loaded_after_the_writes", [False, True])
async def test_a_fill_that_overlapped_writes_is_kept_with_them_replayed(
    loaded_after_the_writes: bool,
) -> None:
    """Whether the load saw the writes made meanwhile or not, the rows kept are the scope's
    rows after them: Alice's new fact in, her deleted one out, Bob's new fact not hers."""
    cache = ScopeVectorCache(max_rows=100)

    async def load_while_others_write(
        scope: Scope, model: str, limit: int
    ) -> tuple[FactIds, Matrix]:
        cache.rows_written([fact(2, ALICE_DM), fact(4, BOB_DM)])
        cache.facts_removed([1])
        loaded = [2, 3] if loaded_after_the_writes else [1, 3]
        return np.array(loaded, dtype=np.int64), np.stack([unit(n) for n in loaded])

    rows = await cache.rows(ALICE_DM, "m", load_while_others_write)
    assert rows is not None and sorted(rows.fact_ids) == [2, 3]
    again = await cache.rows(ALICE_DM, "m", not_loaded)  # the scope was kept
    assert again is not None and ids(again.search(unit(2), 5, None))[0] == 2


async def test_a_fill_that_overlapped_a_failed_write_is_not_kept() -> None:
    cache = ScopeVectorCache(max_rows=100)

    async def load_while_someone_writes(
        scope: Scope, model: str, limit: int
    ) -> tuple[FactIds, Matrix]:
        cache.owners_changed(["console:someone"])
        return np.array([1], dtype=np.int64), unit(1)[np.newaxis, :]

    rows = await cache.rows(ALICE_DM, "m", load_while_someone_writes)
    assert rows is not None and list(rows.fact_ids) == [1]
    await cache.rows(ALICE_DM, "m", load_while_someone_writes)
    assert cache.misses == 2  # not kept: loaded again


async def test_the_cache_is_bounded_and_large_scopes_are_searched_by_lancedb(
    tmp_path: Path,
) -> None:
    index = await open_index(tmp_path / "index", rows=50)
    await index.upsert([fact(100 + k, ALICE_DM) for k in range(30)])
    await index.upsert([fact(200 + k, BOB_DM) for k in range(30)])
    await index.upsert([fact(300 + k, ALICE_ROOM) for k in range(60)])
    query = unit(1)
    try:
        await index.search(ALICE_DM, query, model="m", limit=3)
        await index.search(BOB_DM, query, model="m", limit=3)  # 60 rows > 50: Alice's entry goes
        big = await index.search(ALICE_ROOM, query, model="m", limit=60)
        assert sorted(ids(big)) == list(range(300, 360))
        misses = index.scope_cache.misses
        await index.search(ALICE_ROOM, query, model="m", limit=3)  # known too large: not loaded
        await index.search(BOB_DM, query, model="m", limit=3)  # still held
        assert index.scope_cache.misses == misses
        await index.search(ALICE_DM, query, model="m", limit=3)
        assert index.scope_cache.misses == misses + 1  # Alice's entry went
    finally:
        await index.aclose()
