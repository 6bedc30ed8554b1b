"""The read path with the real model, SQLite and LanceDB: order, scope, status, fallbacks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt
import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex, ScoredFactId
from memory.indexing import index_facts
from memory.recall import (
    FastEmbedReranker,
    RecalledFact,
    Recaller,
    RecallSettings,
    RerankerError,
    ScriptedReranker,
)
from memory.recall.fastembed_reranker import CrossEncoderEngine
from memory.recall.recaller import nothing
from memory.records import Fact, FactStatus, NewFact
from memory.scope import Scope, ScopeMode
from memory.store import Store

ALICE = Scope("console:alice", "console:room1")
ALICE_ELSEWHERE = Scope("console:alice", "console:room2")
ALICE_DIRECT = Scope("console:alice", "console:dm")
BOB = Scope("console:bob", "console:room1")

ALICE_FACTS = [
    "My sister is called Anna",
    "I live in Lyon",
    "I work as a nurse at the city hospital",
    "I have two cats named Pixel and Mochi",
    "I play chess on Sunday mornings",
    "I am allergic to peanuts",
    "My favourite film is Spirited Away",
    "I drive a blue Toyota Corolla",
]


async def _remember(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    scope: Scope,
    texts: Sequence[str],
) -> list[Fact]:
    facts = await store.write(
        lambda transaction: [transaction.facts.add(scope, NewFact(text)) for text in texts]
    )
    await index_facts(index, embedder, facts)
    return facts


def _texts(recalled: Sequence[RecalledFact]) -> list[str]:
    return [item.fact.text for item in recalled]


def _for_message(recaller: Recaller) -> Callable[[Scope, str], Awaitable[list[RecalledFact]]]:
    """The recall of a message, as the core asks for it (with nothing read along)."""

    async def recall(scope: Scope, text: str) -> list[RecalledFact]:
        recalled, _ = await recaller.for_message_with(scope, text, nothing)
        return recalled

    return recall


@pytest.fixture
async def alice_facts(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> list[Fact]:
    return await _remember(store, index, embedder, ALICE, ALICE_FACTS)


async def test_passive_returns_top_k_in_cosine_order(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=3))
    recalled = await recaller.passive(ALICE, "what is my sister's name")
    assert len(recalled) == 3
    assert recalled[0].fact.text == "My sister is called Anna"
    scores = [item.score for item in recalled]
    assert scores == sorted(scores, reverse=True)
    query, fact = await embedder.embed(["what is my sister's name", "My sister is called Anna"])
    assert recalled[0].score == pytest.approx(float(query @ fact), abs=1e-4)


async def test_no_mode_returns_other_people_or_rooms(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    question = "What is my sister's name?"
    # Exact copies of the question are the best possible match by cosine and by text.
    await _remember(store, index, embedder, BOB, [question, "My sister is called Berta"])
    await _remember(store, index, embedder, ALICE_ELSEWHERE, [question, "My sister is Clara"])
    allowed = {fact.id for fact in alice_facts}
    for hybrid in (False, True):
        settings = RecallSettings(top_k=50, lookup_min_similarity=-1.0, hybrid=hybrid)
        reranker = ScriptedReranker({question: 100.0}, default=0.0)
        recaller = Recaller(store, index, embedder, settings, reranker=reranker)
        for recall in (recaller.passive, recaller.lookup, _for_message(recaller)):
            recalled = await recall(ALICE, question)
            assert {item.fact.id for item in recalled} <= allowed, (hybrid, recall)
            assert recalled[0].fact.text == "My sister is called Anna"
        assert all(question not in passages for _, passages in reranker.calls)


async def test_user_mode_follows_the_person_but_not_out_of_direct_messages(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    (secret,) = await _remember(store, index, embedder, ALICE_DIRECT, ["My salary is 4000 euros"])
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=50, hybrid=True))
    in_group = replace(ALICE_ELSEWHERE, mode=ScopeMode.USER)
    for recall in (recaller.passive, recaller.lookup):
        texts = _texts(await recall(in_group, "How much is my salary?"))
        assert "My salary is 4000 euros" not in texts
        assert "I live in Lyon" in texts
    in_direct = replace(ALICE_DIRECT, mode=ScopeMode.USER)
    assert (await recaller.lookup(in_direct, "How much is my salary?"))[0].fact.id == secret.id


class LeakyIndex:
    """An index that ignores the scope (test double for a broken or stale index)."""

    def __init__(self, ids: Sequence[int]) -> None:
        self.ids = list(ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        return [ScoredFactId(fact_id, 0.9) for fact_id in self.ids][:limit]

    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        return [ScoredFactId(fact_id, 1.0) for fact_id in self.ids][:limit]

    async def upsert(self, facts: object) -> None: ...
    async def delete(self, fact_ids: object) -> None: ...
    async def erase(self, fact_ids: object) -> None: ...
    async def aclose(self) -> None: ...


async def test_the_sql_read_keeps_the_scope_even_if_the_index_leaks(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    bob_facts = await _remember(store, index, embedder, BOB, ["My sister is called Berta"])
    leaky = LeakyIndex([bob_facts[0].id, alice_facts[0].id])
    for hybrid in (False, True):
        recaller = Recaller(store, leaky, embedder, RecallSettings(top_k=5, hybrid=hybrid))
        for recall in (recaller.passive, recaller.lookup):
            assert [item.fact.id for item in await recall(ALICE, "sister")] == [alice_facts[0].id]


async def test_only_active_facts_come_back(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    # The index still holds the superseded row (as after a crash before the index write).
    await store.write(
        lambda transaction: transaction.facts.set_status(
            ALICE, alice_facts[1].id, FactStatus.SUPERSEDED
        )
    )
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=8))
    for recall in (recaller.passive, recaller.lookup):
        assert "I live in Lyon" not in _texts(await recall(ALICE, "Where do I live?"))


async def test_blank_text_recalls_nothing(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    recaller = Recaller(store, index, embedder, RecallSettings())
    assert await recaller.passive(ALICE, "  ") == []
    assert await recaller.lookup(ALICE, "") == []


async def test_scripted_cross_encoder_order_is_the_one_returned(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    # The reranker prefers what cosine puts last: its order must win.
    judgement = {"I drive a blue Toyota Corolla": 9.0, "I live in Lyon": 5.0}
    reranker = ScriptedReranker(judgement, default=-3.0)
    settings = RecallSettings(top_k=3, lookup_pool=50, lookup_min_similarity=-1.0)
    recaller = Recaller(store, index, embedder, settings, reranker=reranker)
    recalled = await recaller.lookup(ALICE, "What is my sister's name?")
    assert _texts(recalled)[:2] == ["I drive a blue Toyota Corolla", "I live in Lyon"]
    assert [item.score for item in recalled] == [9.0, 5.0, -3.0]
    ((query, passages),) = reranker.calls
    assert query == "What is my sister's name?"
    assert sorted(passages) == sorted(ALICE_FACTS)
    assert passages[0] == "My sister is called Anna"


async def test_lookup_pool_and_loose_cutoff_bound_what_the_reranker_sees(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    reranker = ScriptedReranker()
    recaller = Recaller(
        store, index, embedder, RecallSettings(top_k=2, lookup_pool=4), reranker=reranker
    )
    await recaller.lookup(ALICE, "What is my sister's name?")
    assert len(reranker.calls[-1][1]) == 4
    strict = Recaller(
        store,
        index,
        embedder,
        RecallSettings(top_k=2, lookup_pool=50, lookup_min_similarity=0.5),
        reranker=reranker,
    )
    await strict.lookup(ALICE, "What is my sister's name?")
    assert reranker.calls[-1][1] == ["My sister is called Anna"]


async def test_without_a_reranker_a_lookup_reads_no_wider_pool_than_it_answers(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    alice_facts: list[Fact],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    limits: list[int] = []
    search = index.search

    async def recorded(*args: object, limit: int, **options: object) -> list[ScoredFactId]:
        limits.append(limit)
        return await search(*args, limit=limit, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "search", recorded)
    settings = RecallSettings(top_k=2, lookup_pool=50, lookup_min_similarity=-1.0)
    plain = await Recaller(store, index, embedder, settings).lookup(ALICE, "Who is my sister?")
    reranked = Recaller(store, index, embedder, settings, reranker=ScriptedReranker())
    await reranked.lookup(ALICE, "Who is my sister?")

    assert _texts(plain)[0] == "My sister is called Anna" and len(plain) == 2
    assert limits == [2, 50]


async def test_reranker_that_cannot_load_leaves_cosine_order_and_logs_once(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    alice_facts: list[Fact],
    caplog: pytest.LogCaptureFixture,
) -> None:
    loads: list[int] = []

    def missing_model() -> CrossEncoderEngine:
        loads.append(1)
        raise OSError("model.onnx not found")

    reranker = FastEmbedReranker(engine_factory=missing_model)
    settings = RecallSettings(top_k=4)
    recaller = Recaller(store, index, embedder, settings, reranker=reranker)
    plain = Recaller(store, index, embedder, settings)
    caplog.set_level(logging.WARNING, logger="memory.recall")
    for question in ("What is my sister's name?", "Which pets do I have?", "Where do I work?"):
        with_failed = await recaller.lookup(ALICE, question)
        assert with_failed == await plain.lookup(ALICE, question)
        scores = [item.score for item in with_failed]
        assert scores == sorted(scores, reverse=True)
    assert _texts(await recaller.lookup(ALICE, "Which pets do I have?"))[0].startswith("I have two")
    warnings = [record for record in caplog.records if "reranker unavailable" in record.message]
    assert len(warnings) == 1
    assert "could not load reranker model" in warnings[0].getMessage()
    assert loads == [1]
    assert not recaller.reranking


async def test_a_failing_rerank_falls_back_for_that_query_only(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    alice_facts: list[Fact],
    caplog: pytest.LogCaptureFixture,
) -> None:
    class FlakyReranker(ScriptedReranker):
        failures = 1

        async def rank(self, query: str, passages: Sequence[str]) -> list[float]:
            if self.failures:
                self.failures -= 1
                raise RerankerError("onnxruntime: out of memory")
            return await super().rank(query, passages)

    reranker = FlakyReranker({"I live in Lyon": 10.0})
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=2), reranker=reranker)
    first = await recaller.lookup(ALICE, "What is my sister's name?")
    assert first[0].fact.text == "My sister is called Anna"
    assert "reranking failed" in caplog.text
    second = await recaller.lookup(ALICE, "What is my sister's name?")
    assert second[0].fact.text == "I live in Lyon"


async def test_for_message_reranks_questions_only(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    reranker = ScriptedReranker()
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=2), reranker=reranker)
    for_message = _for_message(recaller)
    statement = await for_message(ALICE, "I had a long shift at the hospital today.")
    assert len(statement) == 2 and reranker.calls == []
    await for_message(ALICE, "what do you remember about my cats")
    await for_message(ALICE, "Where do I work?")
    assert [query for query, _ in reranker.calls] == [
        "what do you remember about my cats",
        "Where do I work?",
    ]


async def test_hybrid_finds_a_keyword_match_the_cosine_cutoff_drops(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    settings = RecallSettings(top_k=3, lookup_min_similarity=0.95)
    dense = Recaller(store, index, embedder, settings)
    hybrid = Recaller(
        store, index, embedder, RecallSettings(top_k=3, lookup_min_similarity=0.95, hybrid=True)
    )
    assert await dense.lookup(ALICE, "Mochi") == []
    assert _texts(await hybrid.lookup(ALICE, "Mochi")) == ["I have two cats named Pixel and Mochi"]


async def test_hybrid_without_full_text_uses_vectors_and_says_so(
    store: Store,
    embedder: FastEmbedEmbedder,
    caplog: pytest.LogCaptureFixture,
    alice_facts: list[Fact],
    index: LanceFactIndex,
) -> None:
    class VectorsOnly:
        """Only the vector half of an index (test double)."""

        def __init__(self, inner: LanceFactIndex) -> None:
            self.search = inner.search

    settings = RecallSettings(top_k=2, hybrid=True)
    recaller = Recaller(store, VectorsOnly(index), embedder, settings)  # type: ignore[arg-type]
    for _ in range(2):
        recalled = await recaller.passive(ALICE, "my sister")
        assert recalled[0].fact.text == "My sister is called Anna"
    assert caplog.text.count("hybrid recall uses vectors only") == 1


def test_settings_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="top_k"):
        RecallSettings(top_k=0)
    with pytest.raises(ValueError, match="cosine"):
        RecallSettings(lookup_min_similarity=1.5)


async def test_lookups_use_cosine_order_until_the_reranker_has_loaded(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    release = threading.Event()

    def load_when_released() -> CrossEncoderEngine:
        release.wait(timeout=10)
        return PrefersCars()

    reranker = FastEmbedReranker(load_wait=0.01, engine_factory=load_when_released)
    recaller = Recaller(store, index, embedder, RecallSettings(top_k=2), reranker=reranker)
    first = await recaller.lookup(ALICE, "What is my sister's name?")
    assert first[0].fact.text == "My sister is called Anna"
    release.set()
    await reranker.load()
    second = await recaller.lookup(ALICE, "What is my sister's name?")
    assert second[0].fact.text == "I drive a blue Toyota Corolla"
    assert recaller.reranking


class PrefersCars:
    """A scripted cross-encoder engine (test double): anything about a car wins."""

    def rerank(self, query: str, documents: list[str], batch_size: int = 64) -> list[float]:
        return [10.0 if "Toyota" in document else 0.0 for document in documents]


async def test_what_do_you_know_about_me_gives_the_newest_facts_of_the_scope(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder, alice_facts: list[Fact]
) -> None:
    await _remember(store, index, embedder, BOB, ["My sister is called Berta"])
    await _remember(store, index, embedder, ALICE_ELSEWHERE, ["I collect stamps"])
    settings = RecallSettings(top_k=3, overview_limit=5)
    recaller = Recaller(store, index, embedder, settings)
    # Similarity has nothing to rank by: lookup gives top_k facts that happen to score best.
    assert len(await recaller.lookup(ALICE, "What do you know about me?")) == 3
    recalled = await _for_message(recaller)(ALICE, "What do you know about me?")
    assert _texts(recalled) == list(reversed(ALICE_FACTS))[:5]
