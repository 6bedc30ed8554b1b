"""The vector index (LanceDB, and pgvector on PostgreSQL): cosine as numpy computes it,
nearest neighbours, and scope isolation."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory.embedding import FastEmbedEmbedder, HashingEmbedder, cosine_similarity
from memory.index import IndexedFact, LanceFactIndex
from memory.index.filters import scope_where, sql_string_literal
from memory.indexing import Reconcilable
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store

ALICE_R1 = Scope("console:alice", "console:room1")


async def add_indexed(
    store: Store,
    index: Reconcilable,
    scope: Scope,
    texts: Sequence[str],
    vectors: Sequence[npt.NDArray[np.float32]],
    model: str = "m",
) -> list[int]:
    """Facts in the store and their vectors in the index (pgvector rows need their fact)."""
    facts = await store.write(
        lambda transaction: [transaction.facts.add(scope, NewFact(text)) for text in texts]
    )
    await index.upsert(
        [
            IndexedFact(fact.id, fact.owner, fact.room, fact.text, vector, model)
            for fact, vector in zip(facts, vectors, strict=True)
        ]
    )
    return [fact.id for fact in facts]


async def _index_texts(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder, scope: Scope, texts: list[str]
) -> list[int]:
    vectors = await embedder.embed(texts)
    return await add_indexed(store, index, scope, texts, list(vectors), embedder.model_name)


async def test_index_similarity_is_numpy_cosine(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    fact, query = await embedder.embed(["I like chess", "I really enjoy playing chess"])
    await add_indexed(store, index, ALICE_R1, ["I like chess"], [fact])
    (hit,) = await index.search(ALICE_R1, query, model="m", limit=1)
    assert hit.similarity == pytest.approx(cosine_similarity(fact, query), abs=1e-5)


async def test_cosine_not_l2_on_unnormalised_vectors(store: Store, index: Reconcilable) -> None:
    # Same direction, very different length: cosine says identical, L2 would say far apart.
    direction = np.zeros(384, dtype=np.float32)
    direction[0] = 1.0
    await add_indexed(store, index, ALICE_R1, ["x"], [direction * 10])
    (hit,) = await index.search(ALICE_R1, direction, model="m", limit=1)
    assert hit.similarity == pytest.approx(1.0, abs=1e-5)


async def test_nearest_neighbour_within_scope(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    texts = ["I live in Paris", "My sister is called Anna", "I work as a nurse", "I have two cats"]
    alice = await _index_texts(store, index, embedder, ALICE_R1, texts)
    bob = Scope("console:bob", "console:room1")
    (bobs,) = await _index_texts(store, index, embedder, bob, ["My sister is called Berta"])
    (query,) = await embedder.embed(["What is my sister's name?"])
    hits = await index.search(ALICE_R1, query, model=embedder.model_name, limit=2)
    assert hits[0].fact_id == alice[1]
    assert bobs not in [hit.fact_id for hit in hits]
    assert hits[0].similarity >= hits[1].similarity


async def test_min_similarity_cuts_the_pool(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    chess, _ = await _index_texts(
        store, index, embedder, ALICE_R1, ["I like chess", "The sky is blue"]
    )
    (query,) = await embedder.embed(["I really enjoy playing chess"])
    hits = await index.search(
        ALICE_R1, query, model=embedder.model_name, limit=5, min_similarity=0.5
    )
    assert [hit.fact_id for hit in hits] == [chess]


async def test_upsert_replaces_and_delete_removes(store: Store, index: Reconcilable) -> None:
    vector = np.ones(384, dtype=np.float32)
    (fact_id,) = await add_indexed(store, index, ALICE_R1, ["old"], [vector], "model-a")
    await index.upsert(
        [IndexedFact(fact_id, ALICE_R1.owner, ALICE_R1.room, "old", vector * 2, "model-b")]
    )
    assert await index.indexed_models() == {fact_id: "model-b"}
    await index.delete([fact_id])
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


EXAMPLES = itertools.count()
hostile_ids = st.one_of(
    st.sampled_from(["' OR 1=1 --", "%", "_", "a\nb", "ü'ñ", "\\", '"', "*", "a' --"]),
    # NUL and lone surrogates are refused by Scope itself.
    st.text(
        alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]),
        min_size=1,
        max_size=20,
    ),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(owner_id=hostile_ids, room_id=hostile_ids)
async def test_hostile_ids_match_only_their_own_rows(
    store: Store, index: Reconcilable, owner_id: str, room_id: str
) -> None:
    assume(owner_id != "alice")  # the victims' owner
    # One store for every example: each example is on a platform of its own.
    platform = f"matrix{next(EXAMPLES)}"
    embedder = HashingEmbedder(dimension=384)
    hostile = Scope(f"{platform}:{owner_id}", f"{platform}:{room_id}")
    victims = [
        Scope(f"{platform}:alice", f"{platform}:room"),
        Scope(f"{platform}:{owner_id}", f"{platform}:other-room"),
        Scope(f"{platform}:alice", f"{platform}:{room_id}"),
    ]
    vector = (await embedder.embed(["same text"]))[0]
    for victim in victims:
        await add_indexed(store, index, victim, ["same text"], [vector])
    (own,) = await add_indexed(store, index, hostile, ["same text"], [vector])
    hits = await index.search(hostile, vector, model="m", limit=10)
    assert [hit.fact_id for hit in hits] == [own]


async def test_single_fact_writes_are_compacted_every_few_writes(tmp_path: Path) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=4, optimize_every=5)
    vector = np.ones(4, dtype=np.float32)
    for fact_id in range(1, 5):
        await index.upsert([IndexedFact(fact_id, "a:b", "a:c", "t", vector, "m")])
    assert await index.fragment_count() == 4
    await index.upsert([IndexedFact(5, "a:b", "a:c", "t", vector, "m")])
    assert await index.fragment_count() == 1
    await index.delete([1])
    hits = await index.search(Scope("a:b", "a:c"), vector, model="m", limit=10)
    assert sorted(hit.fact_id for hit in hits) == [2, 3, 4, 5]
    await index.aclose()
