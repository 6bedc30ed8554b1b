"""Undo: reverse the latest automatic change of a scope (the pipeline's or consolidation's).

ADD deletes the fact, UPDATE restores the old one, DELETE and MERGE restore the fact; the undo
is a RESTORE event and the original is marked undone, in one transaction. Forgetting is final.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.indexing import index_facts
from memory.records import Action, Actor, Fact, FactEvent, FactStatus
from memory.scope import Scope
from memory.store import EventDraft, Store, StoreTransaction, utc_now

UNDOABLE_ACTORS = (Actor.PIPELINE, Actor.CONSOLIDATION)
UNDOABLE_ACTIONS = (Action.ADD, Action.UPDATE, Action.DELETE, Action.MERGE)


@dataclass(frozen=True, slots=True)
class UndoResult:
    """What an undo reversed: the original event, and the facts it brought back or removed."""

    undone: FactEvent
    restored: tuple[Fact, ...]
    removed: tuple[Fact, ...]
    event: FactEvent


@dataclass(frozen=True, slots=True)
class Reversal:
    restored: tuple[Fact, ...] = ()
    removed: tuple[Fact, ...] = ()

    @property
    def changed_anything(self) -> bool:
        return bool(self.restored or self.removed)


async def undo_latest(
    store: Store, index: VectorIndex, embedder: Embedder, scope: Scope
) -> UndoResult | None:
    async with store.transaction(index=index) as transaction:
        await transaction.lock_people([scope.owner])
        result = await undo_in_transaction(transaction, scope)
        if result is None:
            return None
        await transaction.index.delete([fact.id for fact in result.removed])
        await index_facts(transaction.index, embedder, list(result.restored))
    return result


async def undo_in_transaction(transaction: StoreTransaction, scope: Scope) -> UndoResult | None:
    while True:
        event = await transaction.facts.latest_undoable_event(
            scope, actors=UNDOABLE_ACTORS, actions=UNDOABLE_ACTIONS
        )
        if event is None:
            return None
        reversal = await reverse(transaction, scope, event)
        await transaction.facts.mark_undone(scope, event.id)
        if reversal.changed_anything:
            return UndoResult(
                event,
                reversal.restored,
                reversal.removed,
                await record_restore(transaction, scope, event),
            )
        # The facts it named have changed since (or are gone): nothing left to reverse.


async def reverse(transaction: StoreTransaction, scope: Scope, event: FactEvent) -> Reversal:
    active, deleted = FactStatus.ACTIVE, FactStatus.DELETED
    if event.final_action is Action.ADD:
        return Reversal(removed=await change(transaction, scope, event.fact_id, deleted, active))
    if event.final_action is Action.UPDATE:
        removed = await change(transaction, scope, event.related_fact_id, deleted, active)
        restored = await change(transaction, scope, event.fact_id, active, FactStatus.SUPERSEDED)
        return Reversal(restored, removed)
    if event.final_action is Action.DELETE:
        return Reversal(await change(transaction, scope, event.fact_id, active, deleted))
    merged = (FactStatus.MERGED, FactStatus.SUPERSEDED)
    return Reversal(await change(transaction, scope, event.fact_id, active, *merged))


async def change(
    transaction: StoreTransaction,
    scope: Scope,
    fact_id: int | None,
    status: FactStatus,
    *expected: FactStatus,
) -> tuple[Fact, ...]:
    """The fact, now ``status`` (links cleared), if it was in an ``expected`` status; a
    deleted fact stays in SQLite, out of the index."""
    fact = None if fact_id is None else await transaction.facts.get(scope, fact_id)
    if fact is None or fact.status not in expected:
        return ()
    valid_to = utc_now() if status is FactStatus.DELETED else None
    changed = await transaction.facts.set_status(scope, fact.id, status, valid_to=valid_to)
    return () if changed is None else (changed,)


async def record_restore(
    transaction: StoreTransaction, scope: Scope, undone: FactEvent
) -> FactEvent:
    return await transaction.facts.record_event(
        scope,
        EventDraft(
            final_action=Action.RESTORE,
            actor=Actor.USER,
            fact_id=undone.fact_id,
            related_fact_id=undone.related_fact_id,
            proposed_action=f"undo {undone.final_action.value} (event {undone.id})",
            old_text=undone.new_text,
            new_text=undone.old_text,
        ),
    )
