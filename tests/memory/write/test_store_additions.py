"""The store queries the write path added: scoped undo lookup and per-person queue access."""

from __future__ import annotations

from memory.records import Action, Actor, NewFact
from memory.store import EventDraft, Store
from tests.memory.write.helpers import ALICE, ALICE_OTHER_ROOM, BOB, MESSAGE_TIME

UNDOABLE = (Action.ADD, Action.UPDATE, Action.DELETE, Action.MERGE)


async def test_latest_undoable_event_filters_in_the_query(store: Store) -> None:
    async with store.transaction() as transaction:
        fact = await transaction.facts.add(ALICE, NewFact("I have a cat"))
        add = await transaction.facts.record_event(
            ALICE, EventDraft(Action.ADD, Actor.PIPELINE, fact_id=fact.id)
        )
        undone = await transaction.facts.record_event(
            ALICE, EventDraft(Action.DELETE, Actor.PIPELINE, fact_id=fact.id)
        )
        await transaction.facts.mark_undone(ALICE, undone.id)
        await transaction.facts.record_event(ALICE, EventDraft(Action.NONE, Actor.PIPELINE))
        await transaction.facts.record_event(ALICE, EventDraft(Action.FORGET, Actor.USER))
        await transaction.facts.record_event(
            ALICE_OTHER_ROOM, EventDraft(Action.ADD, Actor.PIPELINE)
        )
        await transaction.facts.record_event(BOB, EventDraft(Action.ADD, Actor.PIPELINE))
    async with store.transaction() as transaction:
        found = await transaction.facts.latest_undoable_event(
            ALICE, actors=[Actor.PIPELINE, Actor.CONSOLIDATION], actions=UNDOABLE
        )
        bob = await transaction.facts.latest_undoable_event(
            BOB, actors=[Actor.CONSOLIDATION], actions=UNDOABLE
        )
    assert found is not None and found.id == add.id
    assert bob is None


async def test_queue_per_owner_in_order_and_discard_per_scope(store: Store) -> None:
    async with store.transaction() as transaction:
        for scope, text in [
            (ALICE, "one"),
            (BOB, "bob"),
            (ALICE_OTHER_ROOM, "two"),
            (ALICE, "three"),
        ]:
            await transaction.pending.enqueue(
                scope, text, message_time=MESSAGE_TIME, now=MESSAGE_TIME
            )
    async with store.transaction() as transaction:
        assert [p.text for p in await transaction.pending.for_owner(ALICE.owner)] == [
            "one",
            "two",
            "three",
        ]
        assert await transaction.pending.discard_for_scope(ALICE) == 2
    async with store.transaction() as transaction:
        assert [p.text for p in await transaction.pending.for_owner(ALICE.owner)] == ["two"]
        assert [p.text for p in await transaction.pending.for_owner(BOB.owner)] == ["bob"]
