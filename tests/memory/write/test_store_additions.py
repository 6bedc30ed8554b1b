"""The store queries the write path added: scoped undo lookup and per-scope queue discard."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.records import Action, Actor, FactEvent, NewFact
from memory.store import EventDraft, Store, StoreTransaction
from tests.memory.write.helpers import ALICE, ALICE_OTHER_ROOM, BOB, MESSAGE_TIME

UNDOABLE = (Action.ADD, Action.UPDATE, Action.DELETE, Action.MERGE)


def record_events(transaction: StoreTransaction) -> FactEvent:
    """Alice's undoable ADD, then events undo must pass over; the ADD."""
    fact = transaction.facts.add(ALICE, NewFact("I have a cat"))
    add = transaction.facts.record_event(
        ALICE, EventDraft(Action.ADD, Actor.PIPELINE, fact_id=fact.id)
    )
    undone = transaction.facts.record_event(
        ALICE, EventDraft(Action.DELETE, Actor.PIPELINE, fact_id=fact.id)
    )
    transaction.facts.mark_undone(ALICE, undone.id)
    transaction.facts.record_event(ALICE, EventDraft(Action.NONE, Actor.PIPELINE))
    transaction.facts.record_event(ALICE, EventDraft(Action.FORGET, Actor.USER))
    transaction.facts.record_event(ALICE_OTHER_ROOM, EventDraft(Action.ADD, Actor.PIPELINE))
    transaction.facts.record_event(BOB, EventDraft(Action.ADD, Actor.PIPELINE))
    return add


def latest_undoable(transaction: StoreTransaction) -> tuple[FactEvent | None, FactEvent | None]:
    found = transaction.facts.latest_undoable_event(
        ALICE, actors=[Actor.PIPELINE, Actor.CONSOLIDATION], actions=UNDOABLE
    )
    bob = transaction.facts.latest_undoable_event(
        BOB, actors=[Actor.CONSOLIDATION], actions=UNDOABLE
    )
    return found, bob


async def test_latest_undoable_event_filters_in_the_query(store: Store) -> None:
    add = await store.write(record_events)
    found, bob = await store.read(latest_undoable)
    assert found is not None and found.id == add.id
    assert bob is None


def enqueue_messages(transaction: StoreTransaction) -> None:
    for scope, text in [
        (ALICE, "one"),
        (BOB, "bob"),
        (ALICE_OTHER_ROOM, "two"),
        (ALICE, "three"),
    ]:
        transaction.pending.enqueue(scope, text, message_time=MESSAGE_TIME, now=MESSAGE_TIME)


def queued_texts(owner: str, transaction: StoreTransaction) -> list[str]:
    queued = transaction.pending.due(datetime.max.replace(tzinfo=UTC))
    return [p.text for p in queued if p.owner == owner]


def discard_alice(transaction: StoreTransaction) -> tuple[list[str], int]:
    """Alice's queue before the discard, and how many it discarded."""
    before = queued_texts(ALICE.owner, transaction)
    return before, transaction.pending.discard_for_scope(ALICE)


async def test_queue_discard_per_scope(store: Store) -> None:
    await store.write(enqueue_messages)
    assert await store.write(discard_alice) == (["one", "two", "three"], 2)
    assert await store.read(lambda transaction: queued_texts(ALICE.owner, transaction)) == ["two"]
    assert await store.read(lambda transaction: queued_texts(BOB.owner, transaction)) == ["bob"]
