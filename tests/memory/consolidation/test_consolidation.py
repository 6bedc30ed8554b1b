"""Consolidation end to end: real all-MiniLM-L6-v2, real SQLite and LanceDB, scripted judge."""

from __future__ import annotations

import json

from memory.consolidation import consolidate
from memory.embedding.base import Embedder
from memory.index import LanceFactIndex
from memory.llm import ScriptedLanguageModel
from memory.records import Action, Actor, Fact, FactStatus
from memory.scope import Scope
from memory.store import Store
from tests.memory.consolidation.helpers import (
    ALICE_DM,
    SETTINGS,
    GoodJudge,
    add_facts,
    day,
    shown_pairs,
)


async def statuses(store: Store, scope: Scope, facts: list[Fact]) -> dict[int, Fact]:
    ids = [fact.id for fact in facts]
    current = await store.read(lambda transaction: transaction.facts.get_many(scope, ids))
    return {fact.id: fact for fact in current}


async def test_paraphrases_merge_with_one_reversible_event(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    older, newer = await add_facts(
        store, index, embedder, ALICE_DM, ["I have a dog named Rex", "My dog Rex"]
    )
    judge = GoodJudge({(older.text, newer.text): ("same", "A")})
    model = ScriptedLanguageModel([judge])

    report = await consolidate(store, index, embedder, model, SETTINGS)

    assert [d.retired.id for d in report.applied if d.retired] == [newer.id]
    current = await statuses(store, ALICE_DM, [older, newer])
    assert current[older.id].status is FactStatus.ACTIVE
    assert current[older.id].text == "I have a dog named Rex"
    assert current[newer.id].status is FactStatus.MERGED
    assert current[newer.id].superseded_by == older.id
    assert current[newer.id].valid_to is not None
    events = await store.read(
        lambda transaction: transaction.facts.events_for_fact(ALICE_DM, newer.id)
    )
    (event,) = events
    assert event.final_action is Action.MERGE
    assert event.actor is Actor.CONSOLIDATION
    assert (event.fact_id, event.related_fact_id) == (newer.id, older.id)
    assert (event.proposed_action, event.proposed_target, event.guard) == ("same", "A", None)
    assert (event.old_text, event.new_text) == (newer.text, older.text)
    assert set(await index.indexed_models()) == {older.id}


async def test_added_detail_survives_whichever_side_it_is_on(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    plain, detailed = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I moved to Berlin", "I moved to Berlin for a job at Siemens"],
    )
    rich, short = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        [
            "I have a dog named Rex, a beagle I adopted because I live alone",
            "I have a dog named Rex",
        ],
        first_day=5,
    )
    judge = GoodJudge(
        {
            (plain.text, detailed.text): ("adds_detail", "B"),
            (rich.text, short.text): ("adds_detail", "A"),
        }
    )
    model = ScriptedLanguageModel(fallback=judge)

    await consolidate(store, index, embedder, model, SETTINGS)

    current = await statuses(store, ALICE_DM, [plain, detailed, rich, short])
    assert current[detailed.id].status is FactStatus.ACTIVE
    assert current[plain.id].status is FactStatus.MERGED
    assert current[plain.id].superseded_by == detailed.id
    assert current[rich.id].status is FactStatus.ACTIVE
    assert current[rich.id].text == rich.text
    assert current[short.id].status is FactStatus.MERGED
    assert current[short.id].superseded_by == rich.id


async def test_an_older_value_is_superseded_by_the_newer(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    hamburg, munich = await add_facts(
        store, index, embedder, ALICE_DM, ["I live in Hamburg", "I live in Munich now"]
    )
    # A good model says B replaces A; even if it names a side, the newer value survives.
    model = ScriptedLanguageModel([GoodJudge({(hamburg.text, munich.text): ("replaces", "A")})])

    await consolidate(store, index, embedder, model, SETTINGS)

    current = await statuses(store, ALICE_DM, [hamburg, munich])
    assert current[munich.id].status is FactStatus.ACTIVE
    assert current[hamburg.id].status is FactStatus.SUPERSEDED
    assert current[hamburg.id].superseded_by == munich.id
    prompt = model.calls[0].prompt_text
    assert f"A ({day(1).date()}): I live in Hamburg" in prompt
    assert f"B ({day(2).date()}): I live in Munich now" in prompt


async def test_a_different_fact_about_another_person_is_left_alone(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    mine, wifes = await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I drive a Toyota Corolla", "My wife drives a Toyota Corolla"],
    )
    model = ScriptedLanguageModel([GoodJudge({(mine.text, wifes.text): ("different", None)})])

    report = await consolidate(store, index, embedder, model, SETTINGS)

    # Cosine 0.83 is far above the threshold: the pair is proposed, judged, and kept apart.
    assert [(p.older.id, p.newer.id) for p in (d.pair for d in report.decisions)] == [
        (mine.id, wifes.id)
    ]
    assert report.merges == []
    current = await statuses(store, ALICE_DM, [mine, wifes])
    assert {fact.status for fact in current.values()} == {FactStatus.ACTIVE}


async def test_the_configured_threshold_decides_what_is_proposed(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    await add_facts(
        store,
        index,
        embedder,
        ALICE_DM,
        ["I drive a Toyota Corolla", "My wife drives a Toyota Corolla"],
    )
    model = ScriptedLanguageModel()  # raises if called
    strict = SETTINGS.__class__(candidate_threshold=0.9)

    report = await consolidate(store, index, embedder, model, strict)

    assert report.pairs_proposed == 0
    assert model.calls == []


async def test_a_reply_that_is_not_the_schema_changes_nothing_and_is_retried(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    older, newer = await add_facts(
        store, index, embedder, ALICE_DM, ["I go hiking every weekend", "I go hiking"]
    )
    model = ScriptedLanguageModel(['{"verdicts": [{"pair": 1, "verdict": "merge"}]}'])

    first = await consolidate(store, index, embedder, model, SETTINGS)

    assert first.failed_batches == 1
    assert first.applied == []
    model.add(GoodJudge({(older.text, newer.text): ("same", "A")}))
    second = await consolidate(store, index, embedder, model, SETTINGS)
    assert [d.retired.id for d in second.applied if d.retired] == [newer.id]


async def test_only_scopes_changed_since_the_last_run_are_visited(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    await add_facts(store, index, embedder, ALICE_DM, ["I like hiking", "I play the guitar"])
    bob = Scope("matrix:@bob:example.org", "matrix:dm")
    await add_facts(store, index, embedder, bob, ["I work as a nurse"])
    model = ScriptedLanguageModel(fallback=GoodJudge({}))
    first = await consolidate(store, index, embedder, model, SETTINGS)
    assert (first.scopes_visited, first.changed_facts) == (2, 3)

    (added,) = await add_facts(store, index, embedder, bob, ["I'm a nurse by profession"])
    calls_before = len(model.calls)
    second = await consolidate(store, index, embedder, model, SETTINGS)

    assert (second.scopes_visited, second.changed_facts) == (1, 1)
    assert [added.id in d.pair.ids for d in second.decisions] == [True]
    assert len(model.calls) == calls_before + 1
    assert "hiking" not in model.calls[-1].prompt_text


async def test_a_dry_run_reports_merges_and_changes_nothing(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    older, newer = await add_facts(
        store, index, embedder, ALICE_DM, ["I work as a nurse in Leeds", "I work as a nurse"]
    )
    model = ScriptedLanguageModel(fallback=GoodJudge({(older.text, newer.text): ("same", "A")}))

    dry = await consolidate(store, index, embedder, model, SETTINGS, dry_run=True)

    assert [d.retired.id for d in dry.merges if d.retired] == [newer.id]
    assert dry.applied == []
    current = await statuses(store, ALICE_DM, [older, newer])
    assert {fact.status for fact in current.values()} == {FactStatus.ACTIVE}
    last_run = await store.read(
        lambda transaction: transaction.get_setting("consolidation.last_run")
    )
    assert last_run is None
    real = await consolidate(store, index, embedder, model, SETTINGS)
    assert [d.retired.id for d in real.applied if d.retired] == [newer.id]


async def test_the_prompt_shows_small_pair_numbers_not_database_ids(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    facts = await add_facts(
        store, index, embedder, ALICE_DM, ["I like hiking", "I enjoy going on hikes"]
    )
    model = ScriptedLanguageModel(fallback=GoodJudge({}))

    await consolidate(store, index, embedder, model, SETTINGS)

    (call,) = model.calls
    assert [number for number, _, _ in shown_pairs(call.messages)] == [1]
    assert call.json_schema is not None and "verdicts" in json.dumps(call.json_schema)
    assert all(f"id {fact.id}" not in call.prompt_text for fact in facts)


async def test_each_pair_is_judged_in_a_call_of_its_own(
    store: Store, index: LanceFactIndex, embedder: Embedder
) -> None:
    # A small model shown several pairs copies its first verdict onto the rest.
    await add_facts(store, index, embedder, ALICE_DM, ["I moved to Berlin", "I live in Berlin"])
    await add_facts(
        store, index, embedder, ALICE_DM, ["I have a dog named Rex", "My dog is named Rex"]
    )
    model = ScriptedLanguageModel(fallback=GoodJudge({}))

    report = await consolidate(store, index, embedder, model, SETTINGS)

    assert report.pairs_proposed == len(model.calls) >= 2
    assert all(len(shown_pairs(call.messages)) == 1 for call in model.calls)
