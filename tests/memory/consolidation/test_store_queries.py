"""The store queries consolidation and the purge job need (real SQLite)."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from memory.records import Action, Actor, Fact, FactEvent, FactStatus, NewFact
from memory.store import EventDraft, Store, StoreTransaction, utc_now
from tests.memory.consolidation.helpers import ALICE_DM, BOB_DM


def add_before_cutoff(transaction: StoreTransaction) -> tuple[Fact, Fact, Fact]:
    old = transaction.facts.add(ALICE_DM, NewFact("I like tea"))
    touched = transaction.facts.add(BOB_DM, NewFact("I like jazz"))
    by_consolidation = transaction.facts.add(BOB_DM, NewFact("I like rock"))
    return old, touched, by_consolidation


def change_after_cutoff(
    touched: Fact, by_consolidation: Fact, transaction: StoreTransaction
) -> Fact:
    new = transaction.facts.add(ALICE_DM, NewFact("I like coffee"))
    transaction.facts.record_event(
        BOB_DM, EventDraft(Action.RESTORE, Actor.USER, fact_id=touched.id)
    )
    transaction.facts.record_event(
        BOB_DM, EventDraft(Action.MERGE, Actor.CONSOLIDATION, fact_id=by_consolidation.id)
    )
    retired = transaction.facts.add(ALICE_DM, NewFact("I like cocoa"))
    transaction.facts.set_status(ALICE_DM, retired.id, FactStatus.MERGED)
    return new


async def test_changed_facts_since_counts_new_facts_and_other_actors_events(store: Store) -> None:
    old, touched, by_consolidation = await store.write(add_before_cutoff)
    cutoff = utc_now()
    new = await store.write(partial(change_after_cutoff, touched, by_consolidation))

    def changed_since(transaction: StoreTransaction) -> tuple[list[Fact], ...]:
        facts = transaction.facts
        return (
            facts.admin_changed_facts_since(None),
            facts.admin_changed_facts_since(cutoff),
            facts.admin_changed_facts_since(cutoff, also_ids=[old.id]),
        )

    everything, changed, with_retry = await store.read(changed_since)

    assert [fact.id for fact in everything] == [old.id, touched.id, by_consolidation.id, new.id]
    assert [fact.id for fact in changed] == [touched.id, new.id]
    assert [fact.id for fact in with_retry] == [old.id, touched.id, new.id]


def undone_merge(transaction: StoreTransaction) -> tuple[Fact, Fact]:
    first = transaction.facts.add(ALICE_DM, NewFact("I like tea"))
    second = transaction.facts.add(ALICE_DM, NewFact("I love tea"))
    merge = transaction.facts.record_event(
        ALICE_DM,
        EventDraft(Action.MERGE, Actor.CONSOLIDATION, fact_id=second.id, related_fact_id=first.id),
    )
    transaction.facts.mark_undone(ALICE_DM, merge.id)
    return first, second


def undone_pairs(transaction: StoreTransaction) -> list[set[frozenset[int]]]:
    return [
        transaction.facts.undone_pairs(ALICE_DM, Actor.CONSOLIDATION),
        transaction.facts.undone_pairs(BOB_DM, Actor.CONSOLIDATION),
        transaction.facts.undone_pairs(ALICE_DM, Actor.PIPELINE),
    ]


async def test_undone_pairs_are_per_scope_and_per_actor(store: Store) -> None:
    first, second = await store.write(undone_merge)

    assert await store.read(undone_pairs) == [{frozenset((first.id, second.id))}, set(), set()]


def deletions(now: datetime, transaction: StoreTransaction) -> tuple[Fact, Fact, Fact, Fact]:
    """An old deletion with an older version, a recent deletion, an active fact."""
    facts = transaction.facts
    older = facts.add(ALICE_DM, NewFact("I play chess on Mondays"))
    old_deleted = facts.add(ALICE_DM, NewFact("I play chess"))
    facts.set_status(ALICE_DM, older.id, FactStatus.SUPERSEDED, superseded_by=old_deleted.id)
    facts.set_status(
        ALICE_DM, old_deleted.id, FactStatus.DELETED, valid_to=now - timedelta(days=100)
    )
    facts.record_event(ALICE_DM, EventDraft(Action.DELETE, Actor.PIPELINE, fact_id=old_deleted.id))
    recent = facts.add(BOB_DM, NewFact("I play golf"))
    facts.set_status(BOB_DM, recent.id, FactStatus.DELETED, valid_to=now)
    active = facts.add(ALICE_DM, NewFact("I like tea"))
    return older, old_deleted, recent, active


async def test_purge_erases_old_deletions_their_older_versions_and_events(store: Store) -> None:
    now = utc_now()
    older, old_deleted, recent, active = await store.write(partial(deletions, now))

    purged = await store.write(
        lambda transaction: transaction.facts.admin_purge_deleted_before(now - timedelta(days=90))
    )

    assert sorted(purged) == sorted([older.id, old_deleted.id])

    def after_purge(
        transaction: StoreTransaction,
    ) -> tuple[Fact | None, Fact | None, list[FactEvent], list[FactEvent], Fact | None]:
        facts = transaction.facts
        return (
            facts.get(ALICE_DM, old_deleted.id),
            facts.get(ALICE_DM, older.id),
            facts.events_for_fact(ALICE_DM, active.id),
            facts.latest_events(ALICE_DM, actors=[Actor.PIPELINE]),
            facts.get(BOB_DM, recent.id),
        )

    gone, gone_older, active_events, pipeline_events, remaining = await store.read(after_purge)
    assert gone is None
    assert gone_older is None
    assert active_events == []
    assert pipeline_events == []
    assert remaining is not None and remaining.status is FactStatus.DELETED
