"""Stage 4: one batched model call that decides ADD/UPDATE/DELETE/NONE for a message's facts.

The model's answer is checked here only as far as deciding whether to ask again: an
unparseable answer or an unknown action raises :class:`UnusableModelOutput` (the write stays
queued); a missing or unknown target gets exactly one retry that states the error. What the
code then does with each decision is decided in :mod:`memory.write.guards`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from memory.llm import CallKind, LanguageModel
from memory.write.errors import UnusableModelOutput
from memory.write.extraction import InlineDecision
from memory.write.parsing import ask, parse_answer
from memory.write.prompts import decision as prompt
from memory.write.prompts.decision import Decision, DecisionItem

log = logging.getLogger(__name__)

DESTRUCTIVE = ("UPDATE", "DELETE")


@dataclass(frozen=True, slots=True)
class DecisionOutcome:
    """What the model said about one new fact: first answer, and the one to act on."""

    item: DecisionItem
    proposed: Decision | None
    final: Decision | None
    retried: bool


def action_of(decision: Decision | InlineDecision) -> str:
    """The model's action as the code compares it, from either call that decides."""
    return decision.action.strip().upper()


def target_error(decision: Decision | None, item: DecisionItem) -> str | None:
    """Why this decision cannot be applied as given, or None if it can."""
    if decision is None:
        return f"there is no decision for new fact {item.number}"
    if action_of(decision) not in DESTRUCTIVE:
        return None
    shown = f"1..{len(item.candidates)}"
    if decision.target is None:
        return f"new fact {item.number}: {decision.action} needs a target among {shown}"
    if not 1 <= decision.target <= len(item.candidates):
        return (
            f"new fact {item.number}: target {decision.target} was not shown for it; "
            f"the existing facts shown for it are {shown}"
        )
    return None


async def decide(llm: LanguageModel, items: Sequence[DecisionItem]) -> list[DecisionOutcome]:
    """Ask once for all items; ask once more for the items whose target was not valid."""
    raw = await ask(llm, CallKind.DECISION, prompt.build_messages(items), prompt.json_schema())
    first = first_decision_per_fact(parse_decisions(raw))
    errors = {
        item.number: error
        for item in items
        if (error := target_error(first.get(item.number), item)) is not None
    }
    if not errors:
        return [DecisionOutcome(i, first.get(i.number), first.get(i.number), False) for i in items]
    retry = await ask_again(llm, items, raw, list(errors.values()))
    return [
        DecisionOutcome(
            item,
            first.get(item.number),
            retry.get(item.number) if item.number in errors else first.get(item.number),
            item.number in errors,
        )
        for item in items
    ]


async def ask_again(
    llm: LanguageModel, items: Sequence[DecisionItem], answer: str, errors: list[str]
) -> dict[int, Decision]:
    """The retry's decisions; a broken retry counts as "still invalid", never as a failure
    that could turn into a destructive default."""
    messages = prompt.build_retry_messages(items, answer, errors)
    try:
        raw = await ask(llm, CallKind.DECISION, messages, prompt.json_schema())
        return first_decision_per_fact(parse_decisions(raw))
    except UnusableModelOutput as error:
        log.warning("decision retry unusable, falling back to safe actions: %s", error)
        return {}


def parse_decisions(raw: str) -> list[Decision]:
    decisions = parse_answer("decision", raw, prompt.DecisionResponse).decisions
    for decision in decisions:
        if action_of(decision) not in prompt.ACTIONS:
            raise UnusableModelOutput(
                "decision",
                f"unknown action {decision.action!r}",
                raw,
                proposed_action=decision.action,
                proposed_target=None if decision.target is None else str(decision.target),
            )
    return decisions


def first_decision_per_fact(decisions: Sequence[Decision]) -> dict[int, Decision]:
    """Keep the first decision for each fact number; a second one is ignored."""
    chosen: dict[int, Decision] = {}
    for decision in decisions:
        if decision.fact in chosen:
            log.info("model gave fact %d a second decision; keeping the first", decision.fact)
            continue
        chosen[decision.fact] = decision
    return chosen
