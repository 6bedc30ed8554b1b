"""Stage 5: the code's checks on the model's decisions. The model proposes, the code decides.

Each guard that changes a decision leaves its name in ``fact_events.guard``; the shortcuts
taken without a model call are recorded the same way, so every write says why it happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memory.embedding.base import Vectors
from memory.records import Action, Fact
from memory.write.candidates import Candidate
from memory.write.decision import DecisionOutcome, action_of, target_error
from memory.write.extraction import ProposedFact
from memory.write.normalise import same_text


class Guard(StrEnum):
    NO_CANDIDATES = "no_candidates"
    NORMALISED_DUPLICATE = "normalised_duplicate"
    REPEATED_IN_MESSAGE = "repeated_in_message"
    MISSING_DECISION = "missing_decision"
    INVALID_TARGET_RETRIED = "invalid_target_retried"
    INVALID_TARGET = "invalid_target"
    IDENTICAL_UPDATE = "identical_update"
    DUPLICATE_TARGET = "duplicate_target"
    DESTRUCTIVE_CAP = "destructive_cap"
    TARGET_GONE = "target_gone"
    DECISION_UNAVAILABLE = "decision_unavailable"
    UNUSABLE_OUTPUT = "unusable_output"
    UNGROUNDED = "ungrounded"
    EDITED_AWAY = "edited_away"


@dataclass(frozen=True, slots=True, eq=False)
class Subject:
    """A new fact with its vector and candidates: what every later stage works on."""

    fact: ProposedFact
    vector: Vectors
    candidates: Sequence[Candidate]


@dataclass(frozen=True, slots=True, eq=False)
class PlannedWrite:
    """The final decision for one new fact, with the raw proposal it came from."""

    subject: Subject
    action: Action
    target: Fact | None = None
    guard: Guard | None = None
    proposed_action: str | None = None
    proposed_target: str | None = None

    @property
    def is_destructive(self) -> bool:
        return self.action in (Action.UPDATE, Action.DELETE)


def shortcut(subject: Subject) -> PlannedWrite | None:
    """Decide without the model: no candidates -> ADD; same text as a candidate -> NONE."""
    if not subject.candidates:
        return PlannedWrite(subject, Action.ADD, guard=Guard.NO_CANDIDATES)
    for candidate in subject.candidates:
        if same_text(subject.fact.text, candidate.fact.text):
            return PlannedWrite(
                subject, Action.NONE, candidate.fact, guard=Guard.NORMALISED_DUPLICATE
            )
    return None


def safe_fallback(action: str) -> Action:
    """What a destructive proposal becomes when it cannot be trusted: a correction is kept as
    an ADD (consolidation may merge the duplicate later), a deletion is not done on a guess."""
    return Action.ADD if action == "UPDATE" else Action.NONE


def from_outcome(subject: Subject, outcome: DecisionOutcome) -> PlannedWrite:
    """One model decision, after the missing/invalid target and identical-text guards."""
    proposed = outcome.proposed
    # A retry that gave nothing usable leaves the first, invalid decision standing.
    final = outcome.final if outcome.final is not None else proposed
    raw_action = None if proposed is None else proposed.action
    raw_target = None if proposed is None or proposed.target is None else str(proposed.target)
    plan = PlannedWrite(
        subject, Action.NONE, proposed_action=raw_action, proposed_target=raw_target
    )
    if final is None:
        return replace_plan(plan, Action.ADD, None, Guard.MISSING_DECISION)
    action = action_of(final)
    if target_error(final, outcome.item) is not None:
        return replace_plan(plan, safe_fallback(action), None, Guard.INVALID_TARGET)
    retried_guard = Guard.INVALID_TARGET_RETRIED if outcome.retried else None
    target = None
    if final.target is not None and 1 <= final.target <= len(subject.candidates):
        target = subject.candidates[final.target - 1].fact
    if action == "UPDATE" and target is not None and same_text(subject.fact.text, target.text):
        return replace_plan(plan, Action.NONE, target, Guard.IDENTICAL_UPDATE)
    chosen_target = target if action in ("UPDATE", "DELETE", "NONE") else None
    return replace_plan(plan, Action(action), chosen_target, retried_guard)


def replace_plan(
    plan: PlannedWrite, action: Action, target: Fact | None, guard: Guard | None
) -> PlannedWrite:
    return PlannedWrite(
        plan.subject,
        action,
        target,
        guard if guard is not None else plan.guard,
        plan.proposed_action,
        plan.proposed_target,
    )


def limit_batch(plans: Sequence[PlannedWrite], max_destructive: int) -> list[PlannedWrite]:
    """Across the message: one action per target (the first), and at most ``max_destructive``
    UPDATE/DELETE actions, so an injected "delete everything" cannot wipe a memory."""
    claimed: set[int] = set()
    destructive = 0
    limited: list[PlannedWrite] = []
    for plan in plans:
        target = plan.target
        if plan.is_destructive and target is not None:
            if target.id in claimed:
                plan = replace_plan(
                    plan, safe_fallback(plan.action.value), None, Guard.DUPLICATE_TARGET
                )
            elif destructive >= max_destructive:
                plan = replace_plan(
                    plan, safe_fallback(plan.action.value), None, Guard.DESTRUCTIVE_CAP
                )
            else:
                claimed.add(target.id)
                destructive += 1
        limited.append(plan)
    return limited
