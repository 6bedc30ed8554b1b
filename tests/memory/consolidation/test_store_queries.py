"""The store queries consolidation and the purge job need (real SQLite)."""

from __future__ import annotations

from datetime import timedelta

from memory.records import Action, Actor, FactStatus, NewFact
from memory.store import EventDraft, Store, utc_now
from tests.memory.consolidation.helpers import ALICE_DM, BOB_DM


async def test_changed_facts_since_counts_new_facts_and_other_actors_events(store: Store) -> None:
    async with store.transaction() as transaction:
        old = await transaction.facts.add(ALICE_DM, NewFact("I like tea"))
        touched = await transaction.facts.add(BOB_DM, NewFact("I like jazz"))
        by_consolidation = await transaction.facts.add(BOB_DM, NewFact("I like rock"))
    cutoff = utc_now()
    async with store.transaction() as transaction:
        new = await transaction.facts.add(ALICE_DM, NewFact("I like coffee"))
        await transaction.facts.record_event(
            BOB_DM, EventDraft(Action.RESTORE, Actor.USER, fact_id=touched.id)
        )
        await transaction.facts.record_event(
            BOB_DM, EventDraft(Action.MERGE, Actor.CONSOLIDATION, fact_id=by_consolidation.id)
        )
        retired = await transaction.facts.add(ALICE_DM, NewFact("I like cocoa"))
        await transaction.facts.set_status(ALICE_DM, retired.id, FactStatus.MERGED)

    async with store.transaction() as transaction:
        everything = await transaction.facts.admin_changed_facts_since(None)
        changed = await transaction.facts.admin_changed_facts_since(cutoff)
        with_retry = await transaction.facts.admin_changed_facts_since(cutoff, also_ids=[old.id])

    assert [fact.id for fact in everything] == [old.id, touched.id, by_consolidation.id, new.id]
    assert [fact.id for fact in changed] == [touched.id, new.id]
    assert [fact.id for fact in with_retry] == [old.id, touched.id, new.id]


async def test_undone_pairs_are_per_scope_and_per_actor(store: Store) -> None:
    async with store.transaction() as transaction:
        first = await transaction.facts.add(ALICE_DM, NewFact("I like tea"))
        second = await transaction.facts.add(ALICE_DM, NewFact("I love tea"))
        merge = await transaction.facts.record_event(
            ALICE_DM,
            EventDraft(
                Action.MERGE, Actor.CONSOLIDATION, fact_id=second.id, related_fact_id=first.id
            ),
        )
        await transaction.facts.mark_undone(ALICE_DM, merge.id)

    async with store.transaction() as transaction:
        assert await transaction.facts.undone_pairs(ALICE_DM, Actor.CONSOLIDATION) == {
            frozenset((first.id, second.id))
        }
        assert await transaction.facts.undone_pairs(BOB_DM, Actor.CONSOLIDATION) == set()
        assert await transaction.facts.undone_pairs(ALICE_DM, Actor.PIPELINE) == set()


async def test_purge_erases_old_deletions_their_older_versions_and_events(store: Store) -> None:
    now = utc_now()
    async with store.transaction() as transaction:
        facts = transaction.facts
        older = await facts.add(ALICE_DM, NewFact("I play chess on Mondays"))
        old_deleted = await facts.add(ALICE_DM, NewFact("I play chess"))
        await facts.set_status(
            ALICE_DM, older.id, FactStatus.SUPERSEDED, superseded_by=old_deleted.id
        )
        await facts.set_status(
            ALICE_DM, old_deleted.id, FactStatus.DELETED, valid_to=now - timedelta(days=100)
        )
        await facts.record_event(
            ALICE_DM, EventDraft(Action.DELETE, Actor.PIPELINE, fact_id=old_deleted.id)
        )
        recent = await facts.add(BOB_DM, NewFact("I play golf"))
        await facts.set_status(BOB_DM, recent.id, FactStatus.DELETED, valid_to=now)
        active = await facts.add(ALICE_DM, NewFact("I like tea"))

    async with store.transaction() as transaction:
        purged = await transaction.facts.admin_purge_deleted_before(now - timedelta(days=90))

    assert sorted(purged) == sorted([older.id, old_deleted.id])
    async with store.transaction() as transaction:
        assert await transaction.facts.get(ALICE_DM, old_deleted.id) is None
        assert await transaction.facts.get(ALICE_DM, older.id) is None
        assert await transaction.facts.events_for_fact(ALICE_DM, active.id) == []
        assert await transaction.facts.latest_events(ALICE_DM, actors=[Actor.PIPELINE]) == []
        remaining = await transaction.facts.get(BOB_DM, recent.id)
        assert remaining is not None and remaining.status is FactStatus.DELETED
