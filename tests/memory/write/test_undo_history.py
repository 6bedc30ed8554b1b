"""Undo, history, forget and remember through the writer, on real SQLite and LanceDB."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import pytest

from memory.embedding import FastEmbedEmbedder, TextKind, Vectors
from memory.errors import EmbeddingError
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.llm import LanguageModelUnavailable, ScriptedLanguageModel
from memory.records import Action, Actor, Fact, FactSource, FactStatus
from memory.store import EventDraft, Store, StoreTransaction
from memory.write import MemoryWriter, WriteError
from tests.memory.write.helpers import (
    ALICE,
    ALICE_OTHER_ROOM,
    BOB,
    MESSAGE_TIME,
    active_texts,
    all_facts,
    decided,
    extracted,
    make_writer,
    pending_count,
    say,
    seed,
)


async def indexed(index: LanceFactIndex) -> set[int]:
    return set(await index.indexed_models())


async def events_of_owner(store: Store) -> list[tuple[Action, Actor, bool]]:
    events = await store.read(
        lambda transaction: transaction.facts.latest_events(ALICE, actors=list(Actor), limit=100)
    )
    return [(e.final_action, e.actor, e.undone_at is not None) for e in reversed(events)]


async def test_undo_add_deletes_and_unindexes(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    writer = make_writer(store, index, embedder, ScriptedLanguageModel([extracted("I have a cat")]))
    await say(writer, ALICE, "I have a cat")
    (cat,) = await all_facts(store, ALICE)
    assert await indexed(index) == {cat.id}

    result = await writer.undo(ALICE)

    assert result is not None and result.undone.final_action is Action.ADD
    assert [fact.id for fact in result.removed] == [cat.id]
    (after,) = await all_facts(store, ALICE)
    assert after.status is FactStatus.DELETED
    assert await indexed(index) == set()
    assert await events_of_owner(store) == [
        (Action.ADD, Actor.PIPELINE, True),
        (Action.RESTORE, Actor.USER, False),
    ]
    assert await writer.undo(ALICE) is None


async def test_undo_update_restores_the_old_version(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    (paris,) = await seed(store, index, embedder, ALICE, "I live in Paris")
    llm = ScriptedLanguageModel([extracted("I live in Berlin"), decided((1, "UPDATE", 1))])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I moved to Berlin")
    berlin = next(f for f in await all_facts(store, ALICE) if f.text == "I live in Berlin")

    result = await writer.undo(ALICE)

    assert result is not None
    assert [f.id for f in result.restored] == [paris.id]
    assert [f.id for f in result.removed] == [berlin.id]
    facts = {fact.id: fact for fact in await all_facts(store, ALICE)}
    assert facts[paris.id].status is FactStatus.ACTIVE
    assert facts[paris.id].superseded_by is None and facts[paris.id].valid_to is None
    assert facts[berlin.id].status is FactStatus.DELETED
    assert await indexed(index) == {paris.id}


async def test_undo_reverses_a_consolidation_merge(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """The contract with the consolidation job: MERGE event, fact_id = merged-away fact."""
    short, detailed = await seed(
        store, index, embedder, ALICE, "I have a sister", "I have a sister who lives in Lyon"
    )

    def merge(transaction: StoreTransaction) -> None:
        transaction.facts.set_status(
            ALICE, short.id, FactStatus.MERGED, superseded_by=detailed.id, valid_to=MESSAGE_TIME
        )
        transaction.facts.record_event(
            ALICE,
            EventDraft(
                Action.MERGE,
                Actor.CONSOLIDATION,
                fact_id=short.id,
                related_fact_id=detailed.id,
                old_text=short.text,
                new_text=detailed.text,
            ),
        )

    await store.write(merge)
    await index.delete([short.id])
    writer = make_writer(store, index, embedder, ScriptedLanguageModel())

    result = await writer.undo(ALICE)

    assert result is not None and result.undone.actor is Actor.CONSOLIDATION
    assert sorted(await active_texts(store, ALICE)) == [
        "I have a sister",
        "I have a sister who lives in Lyon",
    ]
    assert await indexed(index) == {short.id, detailed.id}


async def test_undo_steps_back_one_change_at_a_time_and_skips_non_changes(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(
        [
            extracted("I like chess"),
            extracted("I have a cat"),
            extracted("I like chess"),  # a NONE event, which undo must skip
        ]
    )
    writer = make_writer(store, index, embedder, llm)
    for text in ("I like chess", "I have a cat", "I like chess"):
        await say(writer, ALICE, text)
    first = await writer.undo(ALICE)
    second = await writer.undo(ALICE)
    assert first is not None and [f.text for f in first.removed] == ["I have a cat"]
    assert second is not None and [f.text for f in second.removed] == ["I like chess"]
    assert await writer.undo(ALICE) is None


async def test_undo_only_sees_its_own_scope(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel([extracted("I have a cat")])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I have a cat")
    assert await writer.undo(BOB) is None
    assert await writer.undo(ALICE_OTHER_ROOM) is None
    assert await active_texts(store, ALICE) == ["I have a cat"]


async def test_forget_is_final_and_scoped(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    (paris,) = await seed(store, index, embedder, ALICE, "I live in Paris")
    llm = ScriptedLanguageModel([extracted("I live in Berlin"), decided((1, "UPDATE", 1))])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I moved to Berlin")
    berlin = next(f for f in await all_facts(store, ALICE) if f.status is FactStatus.ACTIVE)

    assert await writer.forget(BOB, berlin.id) is False
    assert await writer.forget(ALICE, berlin.id) is True

    assert await all_facts(store, ALICE) == []  # Berlin and the Paris it replaced are gone
    assert await indexed(index) == set()
    assert await writer.history(ALICE, paris.id) == []
    assert await writer.undo(ALICE) is None  # forgetting is not undone
    (forget_event,) = await store.read(
        lambda transaction: transaction.facts.latest_events(ALICE, actors=[Actor.USER])
    )
    assert forget_event.final_action is Action.FORGET
    assert forget_event.old_text is None and forget_event.new_text is None


async def test_forget_all_also_drops_queued_messages(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await seed(store, index, embedder, ALICE, "I live in Paris", "I have a cat")
    await seed(store, index, embedder, BOB, "I have a dog")
    llm = ScriptedLanguageModel([LanguageModelUnavailable("down")])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I like chess")
    assert await pending_count(store) == 1

    assert await writer.forget_all(ALICE) == 2

    assert await all_facts(store, ALICE) == []
    assert await pending_count(store) == 0
    assert await active_texts(store, BOB) == ["I have a dog"]
    assert len(await indexed(index)) == 1


async def test_history_of_another_scope_is_empty(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    writer = make_writer(store, index, embedder, ScriptedLanguageModel([extracted("I have a cat")]))
    await say(writer, ALICE, "I have a cat")
    (cat,) = await all_facts(store, ALICE)
    assert [e.final_action for e in await writer.history(ALICE, cat.id)] == [Action.ADD]
    assert await writer.history(BOB, cat.id) == []


async def test_remember_adds_without_extraction(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel()
    writer = make_writer(store, index, embedder, llm)
    outcome = await writer.remember(ALICE, "My locker code is 4312")
    assert [write.action for write in outcome.writes] == [Action.ADD]
    (fact,) = await all_facts(store, ALICE)
    assert fact.source is FactSource.REMEMBERED
    assert llm.calls == []  # no extraction; no candidates, so no decision either


async def test_remember_goes_through_candidates_and_decision(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await seed(store, index, embedder, ALICE, "I live in Paris")
    llm = ScriptedLanguageModel([decided((1, "UPDATE", 1))])
    writer = make_writer(store, index, embedder, llm)
    outcome = await writer.remember(ALICE, "I live in Berlin")
    assert [write.action for write in outcome.writes] == [Action.UPDATE]
    assert await active_texts(store, ALICE) == ["I live in Berlin"]
    again = await writer.remember(ALICE, "I live in berlin.")
    assert [write.action for write in again.writes] == [Action.NONE]
    assert len(llm.calls) == 1


async def test_remember_keeps_the_fact_when_the_model_is_down(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    await seed(store, index, embedder, ALICE, "I live in Paris")
    llm = ScriptedLanguageModel([LanguageModelUnavailable("down")])
    writer: MemoryWriter = make_writer(store, index, embedder, llm)
    outcome = await writer.remember(ALICE, "I live in Berlin")
    assert [write.action for write in outcome.writes] == [Action.ADD]
    assert outcome.writes[0].guard == "decision_unavailable"
    assert sorted(await active_texts(store, ALICE)) == ["I live in Berlin", "I live in Paris"]


async def test_index_rows_for_restored_facts_use_the_current_model(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    (chess,) = await seed(store, index, embedder, ALICE, "I like chess")
    llm = ScriptedLanguageModel([extracted("I no longer like chess"), decided((1, "DELETE", 1))])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I no longer like chess")
    await writer.undo(ALICE)
    assert await index.indexed_models() == {chess.id: embedder.model_name}


class InterruptedEmbedder:
    """The real model, whose next call after ``before`` is set first awaits ``before``: test
    double for what happens between an undo's commit and the embedding of what it restored."""

    def __init__(self, inner: FastEmbedEmbedder) -> None:
        self.inner = inner
        self.before: Callable[[], Awaitable[object]] | None = None

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        before, self.before = self.before, None
        if before is not None:
            await before()
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


async def undo_of_a_deleted_chess(
    store: Store, index: LanceFactIndex, embedder: InterruptedEmbedder
) -> tuple[MemoryWriter, Fact]:
    """Alice's "I like chess", deleted by the pipeline: what the next undo restores."""
    (chess,) = await seed(store, index, embedder, ALICE, "I like chess")
    llm = ScriptedLanguageModel([extracted("I no longer like chess"), decided((1, "DELETE", 1))])
    writer = make_writer(store, index, embedder, llm)
    await say(writer, ALICE, "I no longer like chess")
    assert await indexed(index) == set()
    return writer, chess


async def test_a_restored_fact_forgotten_before_its_row_is_written_stays_out_of_the_index(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """The restored facts are embedded after the undo's commit: their rows are written only
    for those still active then."""
    interrupted = InterruptedEmbedder(embedder)
    writer, chess = await undo_of_a_deleted_chess(store, index, interrupted)
    interrupted.before = lambda: writer.forget(ALICE, chess.id)

    result = await writer.undo(ALICE)

    assert result is not None and [fact.id for fact in result.restored] == [chess.id]
    assert interrupted.before is None, "the forget ran between the undo and its index write"
    assert await all_facts(store, ALICE) == []
    assert await indexed(index) == set()


async def test_an_undo_stands_when_its_restored_fact_cannot_be_embedded(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """The undo is committed before the embedding: a failure there does not report it as
    failed (the person would undo one change too many); reconcile indexes the fact."""
    interrupted = InterruptedEmbedder(embedder)
    writer, chess = await undo_of_a_deleted_chess(store, index, interrupted)

    async def model_down() -> None:
        raise EmbeddingError("simulated: the embedding model is down")

    interrupted.before = model_down

    result = await writer.undo(ALICE)

    assert result is not None and [fact.id for fact in result.restored] == [chess.id]
    assert await active_texts(store, ALICE) == ["I like chess"]
    assert await indexed(index) == set()
    assert (await reconcile(store, index, embedder)).missing == 1
    assert await indexed(index) == {chess.id}


async def test_remember_refuses_empty_text(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    writer = make_writer(store, index, embedder, ScriptedLanguageModel())
    with pytest.raises(WriteError, match="nothing to remember"):
        await writer.remember(ALICE, "   ")
    assert await all_facts(store, ALICE) == []
