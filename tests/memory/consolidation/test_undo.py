"""Undo of a consolidation merge (the write path's undo) restores both facts, for good."""

from __future__ import annotations

from memory.consolidation import consolidate
from memory.embedding.base import Embedder
from memory.index import LanceFactIndex
from memory.llm import ScriptedLanguageModel
from memory.records import Action, FactStatus
from memory.store import Store
from memory.write import MemoryWriter, WriteSettings
from tests.memory.consolidation.helpers import ALICE_DM, SETTINGS, GoodJudge, add_facts


async def test_undo_of_a_merge_restores_both_and_it_is_not_merged_again(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    older, newer = await add_facts(
        store, index, embedder, ALICE_DM, ["I have a dog named Rex", "My dog is named Rex"]
    )
    model = ScriptedLanguageModel(fallback=GoodJudge({(older.text, newer.text): ("same", "A")}))
    merged = await consolidate(store, index, embedder, model, SETTINGS)
    assert len(merged.applied) == 1

    # The writer's own undo, as `/memory undo` calls it (its model is never asked).
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())
    result = await writer.undo(ALICE_DM)

    assert result is not None
    assert result.undone.final_action is Action.MERGE
    facts = await store.read(
        lambda transaction: transaction.facts.get_many(ALICE_DM, [older.id, newer.id])
    )
    assert {(fact.id, fact.status) for fact in facts} == {
        (older.id, FactStatus.ACTIVE),
        (newer.id, FactStatus.ACTIVE),
    }
    assert set(await index.indexed_models()) == {older.id, newer.id}
    # The person said no to this merge; the next run sees the restored fact as changed,
    # proposes nothing for the undone pair and asks the model nothing.
    calls = len(model.calls)
    again = await consolidate(store, index, embedder, model, SETTINGS)
    assert again.changed_facts >= 1
    assert again.pairs_proposed == 0
    assert len(model.calls) == calls
