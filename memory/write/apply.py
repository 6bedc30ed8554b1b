"""Stage 6: apply the planned writes, and their index rows, inside one store transaction.

UPDATE supersedes the old row and DELETE marks it ``deleted`` (undo can bring both back);
every decision, NONE included, becomes one ``fact_events`` row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.index.base import IndexedFact
from memory.records import Action, Actor, Fact, FactEvent, FactSource, FactStatus, NewFact
from memory.scope import Scope
from memory.store import EventDraft, StoreTransaction
from memory.write.guards import Guard, PlannedWrite, replace_plan, safe_fallback


@dataclass(frozen=True, slots=True)
class AppliedWrite:
    """One decision as applied: the new fact (ADD/UPDATE), the fact acted on, and its event."""

    text: str
    action: Action
    guard: str | None
    fact: Fact | None
    target: Fact | None
    event: FactEvent


@dataclass(frozen=True, slots=True)
class ApplyContext:
    scope: Scope
    source: FactSource
    source_message_id: str | None
    message_time: datetime
    embedding_model: str


def apply_writes(
    transaction: StoreTransaction, context: ApplyContext, plans: Sequence[PlannedWrite]
) -> list[AppliedWrite]:
    """The plans, then their index rows (the transaction's index decides when those land):
    the new facts' rows in, the rows of the facts they replaced or deleted out."""
    applied = [apply_one(transaction, context, plan) for plan in plans]
    model = context.embedding_model
    transaction.index.delete(
        [
            write.target.id
            for write in applied
            if write.action in (Action.UPDATE, Action.DELETE) and write.target is not None
        ]
    )
    transaction.index.upsert(
        [
            IndexedFact(fact.id, fact.owner, fact.room, fact.text, plan.subject.vector, model)
            for plan, write in zip(plans, applied, strict=True)
            if (fact := write.fact) is not None
        ]
    )
    return applied


def apply_one(
    transaction: StoreTransaction, context: ApplyContext, plan: PlannedWrite
) -> AppliedWrite:
    plan = recheck_target(transaction, context.scope, plan)
    new_fact: Fact | None = None
    target = plan.target
    if plan.action in (Action.ADD, Action.UPDATE):
        new_fact = add_fact(transaction, context, plan)
    if plan.action is Action.UPDATE and target is not None and new_fact is not None:
        transaction.facts.set_status(
            context.scope,
            target.id,
            FactStatus.SUPERSEDED,
            superseded_by=new_fact.id,
            valid_to=new_fact.valid_from or context.message_time,
        )
    if plan.action is Action.DELETE and target is not None:
        transaction.facts.set_status(
            context.scope, target.id, FactStatus.DELETED, valid_to=context.message_time
        )
    draft = event_draft(plan, new_fact, context.source_message_id)
    event = transaction.facts.record_event(context.scope, draft)
    return AppliedWrite(
        plan.subject.fact.text,
        plan.action,
        None if plan.guard is None else plan.guard.value,
        new_fact,
        target,
        event,
    )


def recheck_target(transaction: StoreTransaction, scope: Scope, plan: PlannedWrite) -> PlannedWrite:
    """The target must still be visible and active in this very transaction (consolidation may
    have changed it since the candidates were read); the scope is part of the query."""
    if not plan.is_destructive or plan.target is None:
        return plan
    current = transaction.facts.get(scope, plan.target.id)
    if current is not None and current.status is FactStatus.ACTIVE:
        return plan
    return replace_plan(plan, safe_fallback(plan.action.value), None, Guard.TARGET_GONE)


def add_fact(transaction: StoreTransaction, context: ApplyContext, plan: PlannedWrite) -> Fact:
    proposed = plan.subject.fact
    return transaction.facts.add(
        context.scope,
        NewFact(
            text=proposed.text,
            category=proposed.category,
            source=context.source,
            valid_from=proposed.valid_from,
            source_message_id=context.source_message_id,
        ),
        embedding_model=context.embedding_model,
    )


def event_draft(
    plan: PlannedWrite, new_fact: Fact | None, source_message_id: str | None
) -> EventDraft:
    target = plan.target
    fact_id: int | None
    related: int | None
    if plan.action is Action.UPDATE and target is not None and new_fact is not None:
        fact_id, related = target.id, new_fact.id
    elif plan.action is Action.ADD and new_fact is not None:
        fact_id, related = new_fact.id, None
    else:
        fact_id, related = (None if target is None else target.id), None
    return EventDraft(
        final_action=plan.action,
        actor=Actor.PIPELINE,
        fact_id=fact_id,
        related_fact_id=related,
        proposed_action=plan.proposed_action,
        proposed_target=plan.proposed_target,
        guard=None if plan.guard is None else plan.guard.value,
        old_text=None if target is None else target.text,
        new_text=plan.subject.fact.text,
        source_message_id=source_message_id,
    )
