"""Undo: reverse the latest automatic change of a scope (the pipeline's or consolidation's).

ADD deletes the fact, UPDATE restores the old one, DELETE and MERGE restore the fact; the undo
is a RESTORE event and the original is marked undone, in one transaction. Forgetting is final.

The restored facts are embedded after that transaction (no model call holds the writer), and
their index rows written in a second one, only for those still active then.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial

from memory.embedding.base import Embedder
from memory.errors import EmbeddingError
from memory.index.base import VectorIndex
from memory.indexing import to_indexed, write_still_active
from memory.priority import Priority
from memory.records import Action, Actor, Fact, FactEvent, FactStatus
from memory.scope import Scope
from memory.store import EventDraft, Store, StoreTransaction, utc_now

log = logging.getLogger(__name__)

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
    result = await store.write(partial(undo_in_transaction, scope), index=index)
    if result is not None:
        await index_restored(store, index, embedder, list(result.restored))
    return result


async def index_restored(
    store: Store, index: VectorIndex, embedder: Embedder, restored: list[Fact]
) -> None:
    """Index the facts an undo restored, those still active once embedded. The undo is
    committed already: an embedder failing leaves them out of the index, for reconcile to
    repair, rather than telling the person their undo failed."""
    if not restored:
        return
    try:
        vectors = await embedder.embed([fact.text for fact in restored], "document")
    except EmbeddingError as error:
        log.error("an undo's %d restored facts wait for reconcile: %s", len(restored), error)
        return
    rows = to_indexed(restored, vectors, embedder.model_name)
    await write_still_active(store, index, rows, priority=Priority.REPLY)


def undo_in_transaction(scope: Scope, transaction: StoreTransaction) -> UndoResult | None:
    """The undo's job: the latest change still there reversed, the rows it removed unindexed."""
    transaction.lock_people([scope.owner])
    while True:
        event = transaction.facts.latest_undoable_event(
            scope, actors=UNDOABLE_ACTORS, actions=UNDOABLE_ACTIONS
        )
        if event is None:
            return None
        reversal = reverse(transaction, scope, event)
        transaction.facts.mark_undone(scope, event.id)
        if reversal.changed_anything:
            restore = record_restore(transaction, scope, event)
            transaction.index.delete([fact.id for fact in reversal.removed])
            return UndoResult(event, reversal.restored, reversal.removed, restore)
        # The facts it named have changed since (or are gone): nothing left to reverse.


def reverse(transaction: StoreTransaction, scope: Scope, event: FactEvent) -> Reversal:
    active, deleted = FactStatus.ACTIVE, FactStatus.DELETED
    if event.final_action is Action.ADD:
        return Reversal(removed=change(transaction, scope, event.fact_id, deleted, active))
    if event.final_action is Action.UPDATE:
        removed = change(transaction, scope, event.related_fact_id, deleted, active)
        restored = change(transaction, scope, event.fact_id, active, FactStatus.SUPERSEDED)
        return Reversal(restored, removed)
    if event.final_action is Action.DELETE:
        return Reversal(change(transaction, scope, event.fact_id, active, deleted))
    merged = (FactStatus.MERGED, FactStatus.SUPERSEDED)
    return Reversal(change(transaction, scope, event.fact_id, active, *merged))


def change(
    transaction: StoreTransaction,
    scope: Scope,
    fact_id: int | None,
    status: FactStatus,
    *expected: FactStatus,
) -> tuple[Fact, ...]:
    """The fact, now ``status`` (links cleared), if it was in an ``expected`` status; a
    deleted fact stays in SQLite, out of the index."""
    fact = None if fact_id is None else transaction.facts.get(scope, fact_id)
    if fact is None or fact.status not in expected:
        return ()
    valid_to = utc_now() if status is FactStatus.DELETED else None
    changed = transaction.facts.set_status(scope, fact.id, status, valid_to=valid_to)
    return () if changed is None else (changed,)


def record_restore(transaction: StoreTransaction, scope: Scope, undone: FactEvent) -> FactEvent:
    return transaction.facts.record_event(
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
