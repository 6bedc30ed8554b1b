"""LanceDB full-text search: BM25 inside one scope, the filter in the query, hostile input."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from memory.index import IndexedFact, InMemoryVectorIndex, LanceFactIndex
from memory.recall import FullTextIndex
from memory.scope import Scope, ScopeMode

ALICE = Scope("console:alice", "console:room1")
ALICE_OTHER_ROOM = Scope("console:alice", "console:room2")
BOB = Scope("console:bob", "console:room1")


def _row(fact_id: int, scope: Scope, text: str) -> IndexedFact:
    vector = np.zeros(384, dtype=np.float32)
    vector[fact_id % 384] = 1.0
    return IndexedFact(fact_id, scope.owner, scope.room, text, vector, "test/model")


def test_both_indexes_offer_full_text() -> None:
    assert issubclass(LanceFactIndex, FullTextIndex)
    assert isinstance(InMemoryVectorIndex(), FullTextIndex)


async def test_full_text_ranks_matches_within_scope(index: LanceFactIndex) -> None:
    await index.upsert(
        [
            _row(1, ALICE, "I play chess every Sunday"),
            _row(2, ALICE, "My sister Anna lives in Lyon"),
            _row(3, ALICE, "Chess openings bore me, but chess endgames are fun"),
        ]
    )
    hits = await index.full_text_search(ALICE, "chess", limit=10)
    assert [hit.fact_id for hit in hits] == [3, 1]
    assert hits[0].similarity > hits[1].similarity > 0


async def test_full_text_never_returns_other_people_or_rooms(index: LanceFactIndex) -> None:
    # Twenty better matches outside the scope: a post-filter after ``limit`` would drop
    # Alice's only match; a prefilter keeps it.
    others = [_row(100 + i, BOB, "chess chess chess chess") for i in range(10)]
    others += [_row(200 + i, ALICE_OTHER_ROOM, "chess chess chess") for i in range(10)]
    await index.upsert([*others, _row(1, ALICE, "I play chess sometimes")])
    hits = await index.full_text_search(ALICE, "chess", limit=1)
    assert [hit.fact_id for hit in hits] == [1]


async def test_full_text_user_mode_hides_direct_messages_in_group_rooms(
    index: LanceFactIndex,
) -> None:
    direct = Scope("console:alice", "console:dm")
    await index.upsert([_row(1, direct, "my salary is secret"), _row(2, ALICE, "salary talks")])
    group = ALICE_OTHER_ROOM.with_mode(ScopeMode.USER)
    assert [hit.fact_id for hit in await index.full_text_search(group, "salary", limit=5)] == [2]
    in_direct = direct.with_mode(ScopeMode.USER)
    found = {hit.fact_id for hit in await index.full_text_search(in_direct, "salary", limit=5)}
    assert found == {1, 2}


@pytest.mark.parametrize(
    "query",
    ["' OR 1=1 --", "chess' OR owner_digest != '", '"chess" OR (', "chess) OR (1=1", "*"],
)
async def test_hostile_query_text_cannot_widen_the_scope(index: LanceFactIndex, query: str) -> None:
    await index.upsert([_row(1, BOB, "chess OR owner_digest 1=1"), _row(2, ALICE, "tea")])
    hits = await index.full_text_search(ALICE, query, limit=10)
    assert all(hit.fact_id == 2 for hit in hits)


async def test_hostile_owner_key_matches_nothing(index: LanceFactIndex) -> None:
    await index.upsert([_row(1, ALICE, "chess club")])
    intruder = Scope("console:x' OR 1=1 --", "console:room1")
    assert await index.full_text_search(intruder, "chess", limit=10) == []


async def test_rows_added_after_the_index_and_deleted_rows(index: LanceFactIndex) -> None:
    await index.upsert([_row(1, ALICE, "chess on Sundays")])
    assert [hit.fact_id for hit in await index.full_text_search(ALICE, "chess", limit=5)] == [1]
    await index.upsert([_row(2, ALICE, "chess club on Fridays")])
    await index.delete([1])
    assert [hit.fact_id for hit in await index.full_text_search(ALICE, "chess", limit=5)] == [2]
    await index.optimize()
    assert [hit.fact_id for hit in await index.full_text_search(ALICE, "chess", limit=5)] == [2]


async def test_blank_query_and_empty_table(index: LanceFactIndex) -> None:
    assert await index.full_text_search(ALICE, "   ", limit=5) == []
    assert await index.full_text_search(ALICE, "chess", limit=5) == []


async def test_in_memory_double_scores_shared_words_in_scope() -> None:
    double = InMemoryVectorIndex()
    await double.upsert(
        [_row(1, ALICE, "I play chess"), _row(2, BOB, "chess chess"), _row(3, ALICE, "tea")]
    )
    hits = await double.full_text_search(ALICE, "Chess, anyone?", limit=5)
    assert [(hit.fact_id, hit.similarity) for hit in hits] == [(1, 1.0)]


async def test_concurrent_first_queries_build_one_index(index: LanceFactIndex) -> None:
    await index.upsert([_row(1, ALICE, "chess on Sundays"), _row(2, ALICE, "tea")])
    results = await asyncio.gather(
        *(index.full_text_search(ALICE, "chess", limit=5) for _ in range(4))
    )
    assert all([hit.fact_id for hit in hits] == [1] for hits in results)
    full_text = [i for i in await index._table.list_indices() if "text" in i.columns]
    assert len(full_text) == 1
