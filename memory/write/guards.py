"""Stage 5: the code's checks on the model's decisions. The model proposes, the code decides.

Each guard that changes a decision leaves its name in ``fact_events.guard``; the shortcuts
taken without a model call are recorded the same way, so every write says why it happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from memory.embedding.base import Vectors
from memory.records import Action, Fact
from memory.write.candidates import Candidate
from memory.write.decision import DESTRUCTIVE, DecisionOutcome, action_of, target_error
from memory.write.extraction import DEFAULT_CATEGORY, ProposedFact
from memory.write.grounding import shares_a_word
from memory.write.negation import ends_for_the_same_people
from memory.write.normalise import same_text
from memory.write.prompts.decision import ACTIONS
from memory.write.relations import about_other_people


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
    # The combined call's decision named a fact that was not listed, or none for UPDATE or
    # DELETE; or a listed fact that the new one does not resemble: not among its candidates,
    # or sharing no word with it where another candidate does ("J'habite à Nantes" UPDATE
    # "Je travaille comme infirmière" beside "J'habite à Lille": all French looks alike).
    INLINE_TARGET_NOT_SHOWN = "inline_target_not_shown"
    INLINE_TARGET_UNRELATED = "inline_target_unrelated"
    # An UPDATE or DELETE between facts that name different people ("my wife" / "I").
    OTHER_PERSON = "other_person"
    # An UPDATE whose new text only says that its target is no longer true: a DELETE.
    ENDED = "ended"
    # An UPDATE or DELETE of a fact filed under another category, sharing no word with it.
    OTHER_SUBJECT = "other_subject"


# What the code chose because the model's decision could not be used, or must not be.
FALLBACKS = frozenset(
    {
        Guard.NO_CANDIDATES,
        Guard.INVALID_TARGET,
        Guard.MISSING_DECISION,
        Guard.DECISION_UNAVAILABLE,
        Guard.OTHER_PERSON,
        Guard.OTHER_SUBJECT,
    }
)
# Categories that say nothing: "other" (the model's, and /memory remember's), and "general",
# the store's default for a fact kept without one.
UNFILED = frozenset({DEFAULT_CATEGORY, "general"})


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
    """Decide without the model: no candidates -> ADD; same text as a candidate -> NONE,
    unless the combined call marked that candidate DELETE (a model may write "I don't have a
    cat anymore" as the known "I have a cat" with DELETE: that fact is no longer true)."""
    if not subject.candidates:
        return PlannedWrite(subject, Action.ADD, guard=Guard.NO_CANDIDATES)
    if deleted_inline(subject):
        return None
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


def deleted_inline(subject: Subject) -> bool:
    """The combined call gave the fact the text of the known fact it marks DELETE."""
    inline = subject.fact.decision
    if inline is None or inline.target is None or action_of(inline) != "DELETE":
        return False
    return inline_mistake(subject) is None and same_text(subject.fact.text, inline.target.text)


def inline_mistake(subject: Subject) -> Guard | None:
    """What is wrong with the target of the combined call's decision, if anything: then the
    decision is not used (the fact is decided by the shortcuts or the decision prompt)."""
    inline = subject.fact.decision
    if inline is None:
        return None
    action = action_of(inline)
    if action == "ADD":
        return None
    if inline.target is None:
        missing = action in DESTRUCTIVE or inline.number is not None
        return Guard.INLINE_TARGET_NOT_SHOWN if missing else None
    own = {candidate.fact.id for candidate in subject.candidates}
    unrelated = inline.target.id not in own or closer_candidate(subject, inline.target)
    return Guard.INLINE_TARGET_UNRELATED if unrelated else None


def closer_candidate(subject: Subject, target: Fact) -> bool:
    """Whether ``target`` shares no word with the new fact while another candidate does."""
    text = subject.fact.text
    return not shares_a_word(text, target.text) and any(
        shares_a_word(text, candidate.fact.text)
        for candidate in subject.candidates
        if candidate.fact.id != target.id
    )


def from_inline(subject: Subject) -> PlannedWrite | None:
    """The combined call's decision for this fact, if the code can use it as it is; None
    sends the fact to the decision prompt. A decision without a target (ADD, NONE) is used
    only if every candidate of the fact was listed in that call: the model saw them all."""
    inline = subject.fact.decision
    if inline is None or inline_mistake(subject) is not None:
        return None
    action = action_of(inline)
    if action not in ACTIONS:
        return None
    target = None if action == "ADD" else inline.target
    own = {candidate.fact.id for candidate in subject.candidates}
    if target is None and not own <= inline.shown:
        return None
    # An UPDATE to the same text never gets here: shortcut() made it NONE before.
    number = None if inline.number is None else str(inline.number)
    return PlannedWrite(subject, Action(action), target, None, inline.action, number)


def with_inline_mistake(plan: PlannedWrite, mistake: Guard) -> PlannedWrite:
    """A write decided without the combined call's decision, marked with why; a guard the
    decision prompt's answer set itself is kept."""
    if plan.guard not in (None, Guard.NO_CANDIDATES, Guard.NORMALISED_DUPLICATE):
        return plan
    inline = plan.subject.fact.decision
    if plan.proposed_action is not None or inline is None:
        return replace(plan, guard=mistake)
    number = None if inline.number is None else str(inline.number)
    return replace(plan, guard=mistake, proposed_action=inline.action, proposed_target=number)


def replace_plan(
    plan: PlannedWrite, action: Action, target: Fact | None, guard: Guard | None
) -> PlannedWrite:
    return replace(plan, action=action, target=target, guard=plan.guard if guard is None else guard)


def kept_apart(plan: PlannedWrite) -> PlannedWrite:
    """A fact about someone else never replaces or deletes one about the person (or about
    a third person): the new fact is added and the known one stays."""
    target = plan.target
    if not plan.is_destructive or target is None:
        return plan
    if not about_other_people(plan.subject.fact.text, target.text):
        return plan
    return replace_plan(plan, Action.ADD, None, Guard.OTHER_PERSON)


def kept_as_new(plan: PlannedWrite) -> PlannedWrite:
    """A fact filed under another category than its target, sharing no word with it, is
    about something else ("Je travaille comme infirmière" put on "Je m'appelle Claire": to a
    small embedding model short sentences of one language look alike): the new fact is
    added and the known one stays."""
    target = plan.target
    if not plan.is_destructive or target is None:
        return plan
    fact = plan.subject.fact
    categories = {fact.category, target.category}
    if len(categories) < 2 or categories & UNFILED or shares_a_word(fact.text, target.text):
        return plan
    return replace_plan(plan, safe_fallback(plan.action.value), None, Guard.OTHER_SUBJECT)


def ended(plan: PlannedWrite) -> PlannedWrite:
    """A fact that only says a known one stopped ("I no longer play chess" of "I play
    chess") is the design's DELETE of it, whether the model answered UPDATE, ADD or NONE:
    the old fact is no longer true and the new one adds nothing to keep. With a date ("I no
    longer smoke, since last year") it adds when: then it is an UPDATE of that fact.
    A safe fallback another guard chose stays as it is."""
    if plan.action == Action.DELETE or plan.guard in FALLBACKS:
        return plan
    target = ended_target(plan)
    if target is None:
        return plan
    action = Action.DELETE if plan.subject.fact.valid_from is None else Action.UPDATE
    if action == plan.action:
        return plan
    return replace_plan(plan, action, target, Guard.ENDED)


def ended_target(plan: PlannedWrite) -> Fact | None:
    """The known fact that ``plan``'s new fact says has stopped: its own target if it has
    one, else the first of its candidates (the most alike) about the same people."""
    text = plan.subject.fact.text
    known = [plan.target] if plan.target is not None else [c.fact for c in plan.subject.candidates]
    for fact in known:
        if ends_for_the_same_people(text, fact.text):
            return fact
    return None


def replacements_added(plans: Sequence[PlannedWrite]) -> list[PlannedWrite]:
    """A new fact that the combined call put on a known fact it does not resemble, while
    another new fact of the message changes that known fact, is what replaced it ("I'm not
    at the library anymore, I switched to the botanical garden"): new information, added,
    never put on a third fact by the decision prompt, which saw only the facts it resembles."""
    changed = {plan.target.id for plan in plans if plan.is_destructive and plan.target is not None}
    return [
        replace_plan(plan, safe_fallback(plan.action.value), None, Guard.DUPLICATE_TARGET)
        if plan.is_destructive and aimed_at(plan) in changed
        else plan
        for plan in plans
    ]


def aimed_at(plan: PlannedWrite) -> int | None:
    """The known fact the combined call put ``plan``'s fact on, if it did not resemble it."""
    inline = plan.subject.fact.decision
    if inline is None or inline.target is None:
        return None
    unrelated = inline_mistake(plan.subject) == Guard.INLINE_TARGET_UNRELATED
    return inline.target.id if unrelated else None


def limit_batch(plans: Sequence[PlannedWrite], max_destructive: int) -> list[PlannedWrite]:
    """Across the message: one action per target (the first), and at most ``max_destructive``
    UPDATE/DELETE actions, so an injected "delete everything" cannot wipe a memory."""
    claimed: set[int] = set()
    destructive = 0
    limited: list[PlannedWrite] = []
    for plan in plans:
        target = plan.target
        if plan.is_destructive and target is not None:
            if target.id in claimed or destructive >= max_destructive:
                guard = Guard.DUPLICATE_TARGET if target.id in claimed else Guard.DESTRUCTIVE_CAP
                plan = replace_plan(plan, safe_fallback(plan.action.value), None, guard)
            else:
                claimed.add(target.id)
                destructive += 1
        limited.append(plan)
    return limited
