"""Full-text search (LanceDB's BM25, PostgreSQL's text search): inside one scope, the filter
in the query, hostile input."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memory.index import IndexedFact, LanceFactIndex, VectorIndex
from memory.recall import FullTextIndex
from memory.records import NewFact
from memory.scope import Scope, ScopeMode
from memory.store import Store
from memory.store.vectors import PgVectorIndex

# The ``index`` fixture: LanceDB beside SQLite, or pgvector in PostgreSQL; both search text.
SearchableIndex = LanceFactIndex | PgVectorIndex

ALICE = Scope("console:alice", "console:room1")
ALICE_OTHER_ROOM = Scope("console:alice", "console:room2")
BOB = Scope("console:bob", "console:room1")


def _row(fact_id: int, scope: Scope, text: str) -> IndexedFact:
    vector = np.zeros(384, dtype=np.float32)
    vector[fact_id % 384] = 1.0
    return IndexedFact(fact_id, scope.owner, scope.room, text, vector, "test/model")


async def _add(store: Store, index: VectorIndex, *rows: tuple[Scope, str]) -> list[int]:
    """Facts in the store and in the index; their ids in order."""
    facts = await store.write(
        lambda transaction: [transaction.facts.add(scope, NewFact(text)) for scope, text in rows]
    )
    await index.upsert([_row(fact.id, Scope(fact.owner, fact.room), fact.text) for fact in facts])
    return [fact.id for fact in facts]


def test_every_index_offers_full_text() -> None:
    assert issubclass(LanceFactIndex, FullTextIndex)
    assert issubclass(PgVectorIndex, FullTextIndex)


async def test_full_text_ranks_matches_within_scope(store: Store, index: SearchableIndex) -> None:
    sunday, _, fun = await _add(
        store,
        index,
        (ALICE, "I play chess every Sunday"),
        (ALICE, "My sister Anna lives in Lyon"),
        (ALICE, "Chess openings bore me, but chess endgames are fun"),
    )
    hits = await index.full_text_search(ALICE, "chess", limit=10)
    assert [hit.fact_id for hit in hits] == [fun, sunday]
    assert hits[0].similarity > hits[1].similarity > 0


async def test_full_text_never_returns_other_people_or_rooms(
    store: Store, index: SearchableIndex
) -> None:
    # Twenty better matches outside the scope: a post-filter after ``limit`` would drop
    # Alice's only match; a prefilter keeps it.
    others = [(BOB, "chess chess chess chess")] * 10
    others += [(ALICE_OTHER_ROOM, "chess chess chess")] * 10
    *_, alices = await _add(store, index, *others, (ALICE, "I play chess sometimes"))
    hits = await index.full_text_search(ALICE, "chess", limit=1)
    assert [hit.fact_id for hit in hits] == [alices]


async def test_full_text_user_mode_hides_direct_messages_in_group_rooms(
    store: Store, index: SearchableIndex
) -> None:
    direct = Scope("console:alice", "console:dm")
    secret, talks = await _add(
        store, index, (direct, "my salary is secret"), (ALICE, "salary talks")
    )
    group = replace(ALICE_OTHER_ROOM, mode=ScopeMode.USER)
    found = await index.full_text_search(group, "salary", limit=5)
    assert [hit.fact_id for hit in found] == [talks]
    in_direct = replace(direct, mode=ScopeMode.USER)
    found = await index.full_text_search(in_direct, "salary", limit=5)
    assert {hit.fact_id for hit in found} == {secret, talks}


@pytest.mark.parametrize(
    "query",
    ["' OR 1=1 --", "chess' OR owner_digest != '", '"chess" OR (', "chess) OR (1=1", "*"],
)
async def test_hostile_query_text_cannot_widen_the_scope(
    store: Store, index: SearchableIndex, query: str
) -> None:
    _, tea = await _add(store, index, (BOB, "chess OR owner_digest 1=1"), (ALICE, "tea"))
    hits = await index.full_text_search(ALICE, query, limit=10)
    assert all(hit.fact_id == tea for hit in hits)


async def test_hostile_owner_key_matches_nothing(store: Store, index: SearchableIndex) -> None:
    await _add(store, index, (ALICE, "chess club"))
    intruder = Scope("console:x' OR 1=1 --", "console:room1")
    assert await index.full_text_search(intruder, "chess", limit=10) == []


async def test_rows_added_after_the_index_and_deleted_rows(
    store: Store, index: SearchableIndex
) -> None:
    (sundays,) = await _add(store, index, (ALICE, "chess on Sundays"))
    hits = await index.full_text_search(ALICE, "chess", limit=5)
    assert [hit.fact_id for hit in hits] == [sundays]
    (fridays,) = await _add(store, index, (ALICE, "chess club on Fridays"))
    await index.delete([sundays])
    hits = await index.full_text_search(ALICE, "chess", limit=5)
    assert [hit.fact_id for hit in hits] == [fridays]
    await index.optimize()
    hits = await index.full_text_search(ALICE, "chess", limit=5)
    assert [hit.fact_id for hit in hits] == [fridays]


async def test_blank_query_and_empty_table(index: SearchableIndex) -> None:
    assert await index.full_text_search(ALICE, "   ", limit=5) == []
    assert await index.full_text_search(ALICE, "chess", limit=5) == []


async def test_any_word_of_the_query_matches_as_with_bm25(
    store: Store, index: SearchableIndex
) -> None:
    (sister,) = await _add(store, index, (ALICE, "My sister is called Anna"))
    hits = await index.full_text_search(ALICE, "what is my sister's name?", limit=5)
    assert [hit.fact_id for hit in hits] == [sister]


async def test_lance_builds_its_full_text_index_at_open_when_asked(tmp_path: Path) -> None:
    rows = [_row(1, ALICE, "chess on Sundays"), _row(2, ALICE, "tea"), _row(3, BOB, "chess")]
    for built, expected_indices in ((False, 0), (True, 1)):
        folder = tmp_path / f"built-{built}"
        index = await LanceFactIndex.open(folder, dimension=384, full_text_index=built)
        await index.upsert(rows)
        # With or without the index (then LanceDB reads every text), the same answer.
        hits = await index.full_text_search(ALICE, "chess", limit=5)
        assert [hit.fact_id for hit in hits] == [1]
        await index.aclose()
        reopened = await LanceFactIndex.open(folder, dimension=384, full_text_index=built)
        indices = [i for i in await reopened._table.list_indices() if "text" in i.columns]
        assert len(indices) == expected_indices
        await reopened.aclose()
