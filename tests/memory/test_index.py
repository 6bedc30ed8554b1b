"""The LanceDB index: cosine as numpy computes it, nearest neighbours, and scope isolation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.embedding import FastEmbedEmbedder, HashingEmbedder, cosine_similarity
from memory.index import IndexedFact, InMemoryVectorIndex, LanceFactIndex
from memory.index.filters import scope_where, sql_string_literal
from memory.scope import Scope

ALICE_R1 = Scope("console:alice", "console:room1")


async def _index_texts(
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    scope: Scope,
    texts: list[str],
    first_id: int,
) -> None:
    vectors = await embedder.embed(texts)
    await index.upsert(
        [
            IndexedFact(first_id + i, scope.owner, scope.room, text, vector, embedder.model_name)
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
    )


async def test_index_similarity_is_numpy_cosine(
    index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    fact, query = await embedder.embed(["I like chess", "I really enjoy playing chess"])
    await index.upsert([IndexedFact(1, ALICE_R1.owner, ALICE_R1.room, "I like chess", fact, "m")])
    (hit,) = await index.search(ALICE_R1, query, limit=1)
    assert hit.similarity == pytest.approx(cosine_similarity(fact, query), abs=1e-5)


async def test_cosine_not_l2_on_unnormalised_vectors(index: LanceFactIndex) -> None:
    # Same direction, very different length: cosine says identical, L2 would say far apart.
    direction = np.zeros(384, dtype=np.float32)
    direction[0] = 1.0
    await index.upsert([IndexedFact(1, ALICE_R1.owner, ALICE_R1.room, "x", direction * 10, "m")])
    (hit,) = await index.search(ALICE_R1, direction, limit=1)
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)


async def test_nearest_neighbour_within_scope(
    index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    texts = ["I live in Paris", "My sister is called Anna", "I work as a nurse", "I have two cats"]
    await _index_texts(index, embedder, ALICE_R1, texts, first_id=1)
    bob = Scope("console:bob", "console:room1")
    await _index_texts(index, embedder, bob, ["My sister is called Berta"], first_id=100)
    (query,) = await embedder.embed(["What is my sister's name?"])
    hits = await index.search(ALICE_R1, query, limit=2)
    assert hits[0].fact_id == 2
    assert all(hit.fact_id < 100 for hit in hits)
    assert hits[0].similarity >= hits[1].similarity


async def test_min_similarity_cuts_the_pool(
    index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await _index_texts(index, embedder, ALICE_R1, ["I like chess", "The sky is blue"], first_id=1)
    (query,) = await embedder.embed(["I really enjoy playing chess"])
    hits = await index.search(ALICE_R1, query, limit=5, min_similarity=0.5)
    assert [hit.fact_id for hit in hits] == [1]


async def test_upsert_replaces_and_delete_removes(index: LanceFactIndex) -> None:
    vector = np.ones(384, dtype=np.float32)
    row = IndexedFact(1, ALICE_R1.owner, ALICE_R1.room, "old", vector, "model-a")
    await index.upsert([row])
    await index.upsert([IndexedFact(1, ALICE_R1.owner, ALICE_R1.room, "new", vector, "model-b")])
    assert await index.indexed_models() == {1: "model-b"}
    await index.delete([1])
    assert await index.indexed_models() == {}


async def test_reopen_with_another_dimension_rebuilds_empty(tmp_path: Path) -> None:
    first = await LanceFactIndex.open(tmp_path / "index", dimension=4)
    await first.upsert([IndexedFact(1, "a:b", "a:c", "t", np.ones(4, dtype=np.float32), "m")])
    await first.aclose()
    second = await LanceFactIndex.open(tmp_path / "index", dimension=8)
    assert await second.count() == 0
    await second.aclose()


def test_literal_quoting_doubles_quotes() -> None:
    assert sql_string_literal("it's") == "'it''s'"
    with pytest.raises(ValueError):
        sql_string_literal("a\x00b")


def test_where_clause_holds_no_user_text() -> None:
    hostile = Scope("matrix:@x' OR 1=1 --:evil.org", "matrix:!room' OR '1'='1")
    clause = scope_where(hostile)
    assert "OR" not in clause and "--" not in clause and "evil" not in clause


hostile_ids = st.one_of(
    st.sampled_from(["' OR 1=1 --", "%", "_", "a\nb", "ü'ñ", "\\", '"', "*", "a' --"]),
    st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(owner_id=hostile_ids, room_id=hostile_ids)
async def test_hostile_ids_match_only_their_own_rows(
    tmp_path_factory: pytest.TempPathFactory, owner_id: str, room_id: str
) -> None:
    index = await LanceFactIndex.open(tmp_path_factory.mktemp("index"), dimension=16)
    embedder = HashingEmbedder(dimension=16)
    hostile = Scope(f"matrix:{owner_id}", f"matrix:{room_id}")
    victims = [
        Scope("matrix:alice", "matrix:room"),
        Scope(f"matrix:{owner_id}", "matrix:other-room"),
        Scope("matrix:alice", f"matrix:{room_id}"),
    ]
    vector = (await embedder.embed(["same text"]))[0]
    await index.upsert(
        [
            IndexedFact(i + 1, scope.owner, scope.room, "same text", vector, "m")
            for i, scope in enumerate(victims)
        ]
        + [IndexedFact(99, hostile.owner, hostile.room, "same text", vector, "m")]
    )
    hits = await index.search(hostile, vector, limit=10)
    assert [hit.fact_id for hit in hits] == [99]
    await index.aclose()


async def test_memory_double_filters_scope_like_lance() -> None:
    index = InMemoryVectorIndex()
    vector = np.ones(4, dtype=np.float32)
    await index.upsert(
        [
            IndexedFact(1, "console:alice", "console:room1", "a", vector, "m"),
            IndexedFact(2, "console:bob", "console:room1", "b", vector, "m"),
        ]
    )
    assert [hit.fact_id for hit in await index.search(ALICE_R1, vector, limit=5)] == [1]


async def test_single_fact_writes_are_compacted_every_few_writes(tmp_path: Path) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=4, optimize_every=5)
    vector = np.ones(4, dtype=np.float32)
    for fact_id in range(1, 5):
        await index.upsert([IndexedFact(fact_id, "a:b", "a:c", "t", vector, "m")])
    assert await index.fragment_count() == 4
    await index.upsert([IndexedFact(5, "a:b", "a:c", "t", vector, "m")])
    assert await index.fragment_count() == 1
    await index.delete([1])
    hits = await index.search(Scope("a:b", "a:c"), vector, limit=10)
    assert sorted(hit.fact_id for hit in hits) == [2, 3, 4, 5]
    await index.aclose()
