"""Crash consistency: reconcile makes the index match the database, the source of truth.

On SQLite the index (LanceDB) is written after the commit, so a crash in between leaves it
behind. On PostgreSQL the vectors share the facts' transaction and are only ever ranked for
active facts: the same "crashes" leave nothing stale there.
"""

from __future__ import annotations

from memory.embedding import FastEmbedEmbedder, HashingEmbedder
from memory.indexing import Reconcilable, index_facts, reconcile
from memory.recall import Recaller, RecallSettings
from memory.records import FactStatus, NewFact
from memory.scope import Scope
from memory.store import Store
from memory.write.candidates import find_candidates

SCOPE = Scope("console:alice", "console:room1")


async def _add(store: Store, *texts: str) -> list[int]:
    return await store.write(
        lambda transaction: [transaction.facts.add(SCOPE, NewFact(text)).id for text in texts]
    )


async def _index(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder, *fact_ids: int
) -> None:
    facts = await store.read(lambda transaction: transaction.facts.get_many(SCOPE, list(fact_ids)))
    await index_facts(index, embedder, facts)


async def test_fact_committed_but_never_indexed_is_found_and_indexed(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    (fact_id,) = await _add(store, "I live in Paris")  # the crash: no index write followed
    assert await index.indexed_models() == {}
    dry = await reconcile(store, index, embedder, dry_run=True)
    assert (dry.missing, dry.stale, dry.reembedded) == (1, 0, 0)
    assert await index.indexed_models() == {}
    report = await reconcile(store, index, embedder)
    assert report.missing == 1
    assert await index.indexed_models() == {fact_id: embedder.model_name}
    (query,) = await embedder.embed(["Where do I live?"])
    assert [
        hit.fact_id for hit in await index.search(SCOPE, query, model=embedder.model_name, limit=1)
    ] == [fact_id]
    assert (await reconcile(store, index, embedder)).in_step


async def test_fact_deleted_in_sqlite_but_still_indexed_is_removed(
    backend: str, store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    kept_id, gone_id = await _add(store, "I like tea", "I like chess")
    # Indexed, then changed in the database: PostgreSQL's vector writes take their own
    # transaction, so the index is not written inside the one that changes the fact.
    await _index(store, index, embedder, kept_id, gone_id)
    await store.write(
        lambda transaction: transaction.facts.set_status(SCOPE, gone_id, FactStatus.DELETED)
    )
    # crash here: the index was never told
    (query,) = await embedder.embed(["I like chess"])
    found = [
        hit.fact_id for hit in await index.search(SCOPE, query, model=embedder.model_name, limit=5)
    ]
    report = await reconcile(store, index, embedder)
    assert report.stale == (1 if backend == "sqlite" else 0)
    assert gone_id in found if backend == "sqlite" else found == [kept_id]
    assert set(await index.indexed_models()) == {kept_id}
    assert [
        hit.fact_id for hit in await index.search(SCOPE, query, model=embedder.model_name, limit=5)
    ] == [kept_id]


async def test_erased_fact_still_indexed_is_removed(
    backend: str, store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    (fact_id,) = await _add(store, "I like chess")
    await _index(store, index, embedder, fact_id)
    await store.write(lambda transaction: transaction.facts.erase_ids(SCOPE, [fact_id]))
    # PostgreSQL: the vector went with its fact (ON DELETE CASCADE).
    assert (await reconcile(store, index, embedder)).stale == (1 if backend == "sqlite" else 0)
    assert await index.indexed_models() == {}


async def test_a_change_of_model_searches_only_the_new_models_vectors(
    store: Store, index: Reconcilable, embedder: FastEmbedEmbedder
) -> None:
    """Two models of one dimension: until reconcile has re-embedded a fact, a search with
    the new model leaves it out (recall and the write path's candidates alike) instead of
    comparing the query with the old model's vector; afterwards every fact is found again."""
    ids = await _add(store, "I like tea", "I have a dog")
    await _index(store, index, embedder, *ids)
    other_model = HashingEmbedder(dimension=384, model_name="test/other-model")
    before, after = (Recaller(store, index, e, RecallSettings()) for e in (embedder, other_model))

    async def recalled(recaller: Recaller) -> set[int]:
        return {item.fact.id for item in await recaller.passive(SCOPE, "Do I like tea?")}

    async def candidates() -> set[int]:
        vectors = await other_model.embed(["I like tea"])
        (found,) = await find_candidates(
            store, index, SCOPE, vectors, model=other_model.model_name, threshold=-1.0, limit=5
        )
        return {candidate.fact.id for candidate in found}

    assert await recalled(before) == set(ids)
    assert await recalled(after) == set() and await candidates() == set()

    report = await reconcile(store, index, other_model)
    assert report.reembedded == 2
    assert await index.indexed_models() == dict.fromkeys(ids, other_model.model_name)
    assert await recalled(after) == set(ids) and await candidates() == set(ids)
    assert await recalled(before) == set()
    facts = await store.read(lambda transaction: transaction.facts.get_many(SCOPE, ids))
    assert {fact.embedding_model for fact in facts} == {other_model.model_name}
