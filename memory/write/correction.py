"""An edited message through the write path: the new text corrects what the old one taught.

The facts the message taught are candidates of every new fact, so the model can UPDATE or
keep one; a taught fact no decision kept, that this message alone taught, is deleted (guard
``edited_away``: kept in history, undoable).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from memory.records import Action, Fact
from memory.scope import Scope, ScopeMode
from memory.store import StoreTransaction
from memory.store.forgetting import Learned
from memory.write.candidates import Candidate
from memory.write.extraction import Extraction, ProposedFact, extract_facts
from memory.write.guards import Guard, PlannedWrite, Subject
from memory.write.pipeline import (
    MessageInput,
    WriteParts,
    gather_subjects,
    not_written,
    plan_subjects,
    split_repeats,
)
from memory.write.precheck import may_hold_fact


async def plan_correction(parts: WriteParts, message: MessageInput) -> list[PlannedWrite]:
    """Decide what the edited text changes; nothing is written (raises with nothing applied,
    so the correction stays queued)."""
    learned, taught = await taught_by(parts, message)
    extraction = Extraction([], [])
    if may_hold_fact(message.text):
        extraction = await extract_facts(parts.llm, message.text, message.message_time)
    unique, repeated = split_repeats(extraction.facts)
    subjects = await gather_subjects(parts, message.scope, unique)
    subjects = await with_taught(parts, subjects, taught)
    writes = await plan_subjects(parts, subjects, repeated, strict=True)
    kept = {write.target.id for write in writes if write.target is not None}
    gone = [
        edited_away(fact)
        for fact, found in zip(taught, learned, strict=True)
        if found.only_source and fact.id not in kept
    ]
    # As for a message: facts the text does not state are recorded, not written.
    kept_aside = [not_written(fact, Guard.UNGROUNDED) for fact in extraction.ungrounded]
    return [*writes, *gone, *kept_aside]


async def taught_by(parts: WriteParts, message: MessageInput) -> tuple[list[Learned], list[Fact]]:
    """The active facts the message taught, in the message's own room."""
    if message.source_message_id is None:
        return [], []
    scope = Scope(message.scope.owner, message.scope.room, ScopeMode.USER_ROOM)
    learned, facts = await parts.store.read(
        partial(learned_with_facts, scope, message.source_message_id)
    )
    by_id = {fact.id: fact for fact in facts}
    kept = [found for found in learned if found.fact_id in by_id]
    return kept, [by_id[found.fact_id] for found in kept]


def learned_with_facts(
    scope: Scope, message_id: str, transaction: StoreTransaction
) -> tuple[list[Learned], list[Fact]]:
    learned = transaction.forget.learned_from(scope, message_id)
    return learned, transaction.facts.get_many(scope, [found.fact_id for found in learned])


async def with_taught(
    parts: WriteParts, subjects: Sequence[Subject], taught: Sequence[Fact]
) -> list[Subject]:
    """Each subject with the taught facts among its candidates (by their real similarity)."""
    if not taught or not subjects:
        return list(subjects)
    vectors = await parts.embedder.embed([fact.text for fact in taught], "document")
    widened = []
    for subject in subjects:
        present = {candidate.fact.id for candidate in subject.candidates}
        extra = [
            Candidate(fact, float(np.dot(subject.vector, vector)))
            for fact, vector in zip(taught, vectors, strict=True)
            if fact.id not in present
        ]
        widened.append(Subject(subject.fact, subject.vector, [*subject.candidates, *extra]))
    return widened


def edited_away(fact: Fact) -> PlannedWrite:
    subject = Subject(ProposedFact(fact.text, fact.category), np.zeros(0, dtype=np.float32), ())
    return PlannedWrite(subject, Action.DELETE, fact, guard=Guard.EDITED_AWAY)
