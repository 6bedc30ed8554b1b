"""Applying one decision: one short store transaction, the index rows included. The retired
fact keeps its row and a MERGE event records both texts, so undo can bring it back.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from memory.consolidation.decisions import MergeDecision
from memory.consolidation.pairs import consolidation_scope
from memory.index.base import VectorIndex
from memory.priority import Priority
from memory.records import Action, Actor, Fact, FactEvent, FactStatus
from memory.store import EventDraft, Store, StoreTransaction


async def apply_decision(
    store: Store, index: VectorIndex, decision: MergeDecision, *, now: datetime
) -> FactEvent | None:
    """Retire the decision's fact; ``None`` if either fact is no longer active (a person
    may have forgotten or changed it since the pair was proposed)."""
    survivor, retired = decision.survivor, decision.retired
    if survivor is None or retired is None:
        return None
    job = partial(retire, decision, survivor, retired, now)
    return await store.write(job, index=index, priority=Priority.BACKGROUND)


def retire(
    decision: MergeDecision,
    survivor: Fact,
    retired: Fact,
    now: datetime,
    transaction: StoreTransaction,
) -> FactEvent | None:
    """The job of :func:`apply_decision`."""
    scope = consolidation_scope(survivor)
    transaction.lock_people([survivor.owner, retired.owner])
    current = transaction.facts.get_many(scope, [survivor.id, retired.id])
    if len(current) != 2 or any(fact.status is not FactStatus.ACTIVE for fact in current):
        return None
    transaction.facts.set_status(
        scope,
        retired.id,
        decision.retired_status,
        superseded_by=survivor.id,
        valid_to=now,
    )
    event = transaction.facts.record_event(
        scope,
        EventDraft(
            final_action=Action.MERGE,
            actor=Actor.CONSOLIDATION,
            fact_id=retired.id,
            related_fact_id=survivor.id,
            proposed_action=decision.proposed_verdict,
            proposed_target=decision.proposed_keep,
            guard=decision.guard,
            old_text=retired.text,
            new_text=survivor.text,
        ),
    )
    transaction.index.delete([retired.id])
    return event
