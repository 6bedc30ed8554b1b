"""One message through the write path: extract, candidates, decide, guard, apply, index.

This module only chains the stages; errors pass up with nothing applied, so the write stays
queued and is retried.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial

import numpy as np

from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.llm import LanguageModel, LanguageModelError
from memory.priority import Priority
from memory.records import Action, FactSource
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.write.apply import AppliedWrite, ApplyContext, apply_writes
from memory.write.candidates import CALIBRATED_CANDIDATE_THRESHOLD, find_candidates
from memory.write.combined import extract_and_decide, related_facts
from memory.write.decision import decide
from memory.write.errors import UnusableModelOutput
from memory.write.extraction import Extraction, ProposedFact, extract_facts
from memory.write.guards import (
    Guard,
    PlannedWrite,
    Subject,
    ended,
    from_inline,
    from_outcome,
    inline_mistake,
    kept_apart,
    kept_as_new,
    limit_batch,
    replacements_added,
    shortcut,
    with_inline_mistake,
)
from memory.write.normalise import normalise_text
from memory.write.precheck import may_hold_fact
from memory.write.prompts.decision import DecisionItem

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    candidate_threshold: float = CALIBRATED_CANDIDATE_THRESHOLD
    candidate_limit: int = 5
    max_destructive_actions: int = 3
    # Extract and decide in one call when the message finds known facts (memory.write.combined).
    decide_in_extraction: bool = True


@dataclass(frozen=True, slots=True)
class WriteParts:
    """Everything the pipeline needs, injected by the writer."""

    store: Store
    index: VectorIndex
    embedder: Embedder
    llm: LanguageModel
    settings: PipelineSettings


@dataclass(frozen=True, slots=True)
class QueueClaim:
    """The queue row a message came from, and the worker that claimed it."""

    pending_id: int
    worker: str


@dataclass(frozen=True, slots=True)
class MessageInput:
    scope: Scope
    text: str
    message_time: datetime
    source_message_id: str | None = None
    claim: QueueClaim | None = None


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What one message or "remember" did; ``completed`` is False if its queue row was gone
    (forgotten, or taken over by another worker) at commit, so nothing was applied."""

    writes: tuple[AppliedWrite, ...]
    completed: bool = True


async def plan_message(parts: WriteParts, message: MessageInput) -> list[PlannedWrite]:
    """Extract the user's facts from a queued message and decide on them; nothing is written
    (raises, with nothing applied, so the write stays queued)."""
    if not may_hold_fact(message.text):
        return []
    extraction = await extract(parts, message)
    writes = await plan_writes(parts, message.scope, extraction.facts, strict=True)
    # Facts the message does not state are recorded, not written: the event says why.
    return writes + [not_written(fact, Guard.UNGROUNDED) for fact in extraction.ungrounded]


async def extract(parts: WriteParts, message: MessageInput) -> Extraction:
    """One model call: the combined one if the message finds known facts, else extraction."""
    settings = parts.settings
    known = []
    if settings.decide_in_extraction:
        # Room for the candidates of two facts: a message often states two.
        known = await related_facts(
            parts.store,
            parts.index,
            parts.embedder,
            message.scope,
            message.text,
            threshold=settings.candidate_threshold,
            limit=2 * settings.candidate_limit,
        )
    if known:
        return await extract_and_decide(parts.llm, message.text, message.message_time, known)
    return await extract_facts(parts.llm, message.text, message.message_time)


async def plan_writes(
    parts: WriteParts, scope: Scope, facts: Sequence[ProposedFact], *, strict: bool
) -> list[PlannedWrite]:
    unique, repeated = split_repeats(facts)
    subjects = await gather_subjects(parts, scope, unique)
    return await plan_subjects(parts, subjects, repeated, strict=strict)


async def plan_subjects(
    parts: WriteParts,
    subjects: Sequence[Subject],
    repeated: Sequence[ProposedFact],
    *,
    strict: bool,
) -> list[PlannedWrite]:
    """Decide on facts whose candidates were found: shortcuts, the model, the batch guards."""
    planned: dict[int, PlannedWrite] = {}
    undecided: list[tuple[int, Subject]] = []
    for position, subject in enumerate(subjects):
        early = shortcut(subject) or from_inline(subject)
        if early is None:
            undecided.append((position, subject))
        else:
            planned[position] = early
    if undecided:
        decided = await decide_subjects(parts.llm, [s for _, s in undecided], strict=strict)
        planned.update(zip([p for p, _ in undecided], decided, strict=True))
    ordered = [
        ended(kept_apart(kept_as_new(marked(planned[position]))))
        for position in range(len(subjects))
    ]
    limited = limit_batch(replacements_added(ordered), parts.settings.max_destructive_actions)
    repeats = [not_written(fact, Guard.REPEATED_IN_MESSAGE) for fact in repeated]
    return limited + repeats


def marked(plan: PlannedWrite) -> PlannedWrite:
    """The write, with the guard that kept the combined call's decision out, if one did."""
    mistake = inline_mistake(plan.subject)
    return plan if mistake is None else with_inline_mistake(plan, mistake)


def split_repeats(
    facts: Sequence[ProposedFact],
) -> tuple[list[ProposedFact], list[ProposedFact]]:
    """The first of each normalised text, and the repeats within the same message."""
    seen: set[str] = set()
    unique: list[ProposedFact] = []
    repeated: list[ProposedFact] = []
    for fact in facts:
        key = normalise_text(fact.text)
        (repeated if key in seen else unique).append(fact)
        seen.add(key)
    return unique, repeated


def not_written(fact: ProposedFact, guard: Guard) -> PlannedWrite:
    """A proposed fact the code keeps out, as a NONE that records which guard did it."""
    subject = Subject(fact, np.zeros(0, dtype=np.float32), ())
    return PlannedWrite(subject, Action.NONE, guard=guard)


async def gather_subjects(
    parts: WriteParts, scope: Scope, facts: Sequence[ProposedFact]
) -> list[Subject]:
    if not facts:
        return []
    vectors = await parts.embedder.embed([fact.text for fact in facts], "document")
    candidates = await find_candidates(
        parts.store,
        parts.index,
        scope,
        vectors,
        model=parts.embedder.model_name,
        threshold=parts.settings.candidate_threshold,
        limit=parts.settings.candidate_limit,
    )
    return [
        Subject(fact, vector, found)
        for fact, vector, found in zip(facts, vectors, candidates, strict=True)
    ]


async def decide_subjects(
    llm: LanguageModel, subjects: Sequence[Subject], *, strict: bool
) -> list[PlannedWrite]:
    items = [
        DecisionItem(number, s.fact.text, tuple(c.fact.text for c in s.candidates))
        for number, s in enumerate(subjects, 1)
    ]
    try:
        outcomes = await decide(llm, items)
    except (UnusableModelOutput, LanguageModelError) as error:
        if strict:
            raise
        log.warning("decision unavailable, adding the remembered fact as is: %s", error)
        return [PlannedWrite(s, Action.ADD, guard=Guard.DECISION_UNAVAILABLE) for s in subjects]
    return [from_outcome(s, o) for s, o in zip(subjects, outcomes, strict=True)]


async def commit(
    parts: WriteParts,
    message: MessageInput,
    source: FactSource,
    plan: Sequence[PlannedWrite],
    *,
    priority: Priority = Priority.REPLY,
) -> WriteOutcome:
    """Apply and complete the queue row in ONE transaction, so nothing is applied twice; if
    the row is gone or no longer this worker's, nothing is applied at all."""
    context = ApplyContext(
        message.scope,
        source,
        message.source_message_id,
        message.message_time,
        parts.embedder.model_name,
    )
    job = partial(complete_and_apply, message, context, plan)
    return await parts.store.write(job, index=parts.index, priority=priority)


def complete_and_apply(
    message: MessageInput,
    context: ApplyContext,
    plan: Sequence[PlannedWrite],
    transaction: StoreTransaction,
) -> WriteOutcome:
    """The job of :func:`commit`: its vectors were made before, so it only writes."""
    claim = message.claim
    transaction.lock_people([message.scope.owner])
    if claim is not None and not transaction.pending.complete_claimed(
        claim.pending_id, claim.worker
    ):
        return WriteOutcome((), completed=False)
    return WriteOutcome(tuple(apply_writes(transaction, context, plan)))
