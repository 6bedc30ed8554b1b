"""Never across scopes, whatever the model says; without a model only text duplicates merge."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial

import pytest

from memory.consolidation import PairJudgement, apply_decision, consolidate, propose_pairs
from memory.consolidation.decisions import decide
from memory.embedding.base import Embedder
from memory.index import LanceFactIndex
from memory.llm import ChatMessage, LanguageModelUnavailable, ScriptedLanguageModel
from memory.records import Fact, FactStatus
from memory.store import Store, StoreTransaction, utc_now
from tests.memory.consolidation.helpers import (
    ALICE_DM,
    ALICE_ROOM,
    BOB_DM,
    SETTINGS,
    GoodJudge,
    add_facts,
    judged,
    shown_pairs,
)


def always_same(messages: Sequence[ChatMessage]) -> str:
    """A wrong model: every pair it is shown, and some it was not, are "the same"."""
    numbers = [number for number, _, _ in shown_pairs(messages)] + [2, 3, 7]
    return json.dumps({"verdicts": [judged(n, "same", "A") for n in numbers]})


async def all_statuses(store: Store, facts: list[Fact]) -> list[FactStatus]:
    current = await store.read(partial(read_again, facts))
    assert None not in current
    return [fact.status for fact in current if fact is not None]


def read_again(facts: list[Fact], transaction: StoreTransaction) -> list[Fact | None]:
    """Each fact as it is now, read in its own scope."""
    return [
        transaction.facts.get(ALICE_DM.__class__(fact.owner, fact.room), fact.id) for fact in facts
    ]


async def test_the_same_fact_in_three_scopes_is_never_merged(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    facts = [
        *await add_facts(store, index, embedder, ALICE_DM, ["I have a dog named Rex"]),
        *await add_facts(store, index, embedder, BOB_DM, ["I have a dog named Rex"]),
        *await add_facts(store, index, embedder, ALICE_ROOM, ["My dog is named Rex"]),
    ]
    model = ScriptedLanguageModel(fallback=always_same)

    report = await consolidate(store, index, embedder, model, SETTINGS)

    assert report.scopes_visited == 3
    assert report.pairs_proposed == 0
    assert model.calls == []
    assert await all_statuses(store, facts) == [FactStatus.ACTIVE] * 3


async def test_a_fact_of_another_scope_cannot_even_be_proposed(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    (alices,) = await add_facts(store, index, embedder, ALICE_DM, ["I have a dog named Rex"])
    (bobs,) = await add_facts(store, index, embedder, BOB_DM, ["I have a dog named Rex"])

    # Even handed Bob's fact as "changed" while visiting Alice's scope, no pair comes out:
    # the index search and the SQLite read both filter by Alice's scope.
    pairs = await propose_pairs(
        store, index, embedder, ALICE_DM, [bobs], threshold=0.5, neighbours=5
    )

    assert pairs == []
    assert alices.id != bobs.id


async def test_verdicts_naming_pairs_that_were_not_shown_are_ignored(
    store: Store, index: LanceFactIndex, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    facts = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I drive a Toyota Corolla", "My wife drives a Toyota Corolla"],
    )
    await add_facts(store, index, embedder, BOB_DM, ["I drive a Toyota Corolla"])
    wrong = json.dumps(
        {
            "verdicts": [
                judged(1, "different"),
                judged(1, "same", "A"),
                judged(2, "same", "A"),
                judged(0, "same", "B"),
            ]
        }
    )
    model = ScriptedLanguageModel([wrong])

    report = await consolidate(store, index, embedder, model, SETTINGS)

    assert caplog.text.count("ignored (not shown)") == 3
    assert report.merges == []
    assert len(model.calls) == 1
    assert "Corolla" in model.calls[0].prompt_text
    assert await all_statuses(store, facts) == [FactStatus.ACTIVE] * 2


async def test_without_a_model_only_normalised_text_duplicates_merge(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    tea, tea_again, dog, dog_again = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I like tea.", "i like  TEA", "I have a dog named Rex", "My dog is named Rex"],
    )

    report = await consolidate(store, index, embedder, None, SETTINGS)

    assert [(d.guard, d.proposed_verdict) for d in report.applied] == [
        ("normalised_text_equal", None)
    ]
    assert report.left_without_model == 1
    assert await all_statuses(store, [tea, tea_again, dog, dog_again]) == [
        FactStatus.ACTIVE,
        FactStatus.MERGED,
        FactStatus.ACTIVE,
        FactStatus.ACTIVE,
    ]


async def test_when_the_model_is_down_pairs_wait_for_the_next_run(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    tea, tea_again, dog, dog_again = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I like tea.", "I like tea", "I have a dog named Rex", "My dog Rex"],
    )
    model = ScriptedLanguageModel([LanguageModelUnavailable("ollama is not running")])

    down = await consolidate(store, index, embedder, model, SETTINGS)

    assert down.failed_batches == 1
    assert await all_statuses(store, [tea, tea_again, dog, dog_again]) == [
        FactStatus.ACTIVE,
        FactStatus.MERGED,
        FactStatus.ACTIVE,
        FactStatus.ACTIVE,
    ]
    model.add(GoodJudge({(dog.text, dog_again.text): ("same", "A")}))
    back = await consolidate(store, index, embedder, model, SETTINGS)
    assert [d.retired.id for d in back.applied if d.retired] == [dog_again.id]


async def test_a_fact_merged_away_in_this_run_is_not_merged_again(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    facts = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I work as a nurse in Leeds", "I work as a nurse", "I am a nurse"],
    )
    model = ScriptedLanguageModel(fallback=always_same)

    report = await consolidate(store, index, embedder, model, SETTINGS)

    # Three pairs, all "same, keep A" (A is the older, and says all that B says): whatever
    # the order, two retire a fact, the pair whose fact was already retired is skipped, and
    # the oldest stays.
    assert report.pairs_proposed == 3
    assert (len(report.applied), len(report.skipped)) == (2, 1)
    assert await all_statuses(store, facts) == [
        FactStatus.ACTIVE,
        FactStatus.MERGED,
        FactStatus.MERGED,
    ]


async def test_a_fact_changed_after_the_proposal_is_not_merged(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    older, newer = await add_facts(
        store, index, embedder, ALICE_DM, ["I have a dog named Rex", "My dog is named Rex"]
    )
    (pair,) = await propose_pairs(
        store, index, embedder, ALICE_DM, [newer], threshold=0.5, neighbours=5
    )
    # The person deletes one of them while the model is still judging.
    await store.write(
        lambda transaction: transaction.facts.set_status(ALICE_DM, older.id, FactStatus.DELETED)
    )

    decision = decide(
        pair, PairJudgement(pair=1, same_thing=True, both_true=True, verdict="same", keep="A")
    )
    event = await apply_decision(store, index, decision, now=utc_now())

    assert event is None
    assert await all_statuses(store, [older, newer]) == [FactStatus.DELETED, FactStatus.ACTIVE]
    events = await store.read(
        lambda transaction: transaction.facts.events_for_fact(ALICE_DM, newer.id)
    )
    assert events == []
