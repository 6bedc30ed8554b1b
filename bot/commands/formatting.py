"""How facts and their history read in chat."""

from __future__ import annotations

from memory.records import Action, Actor, Fact, FactEvent

ACTOR_WORDS = {
    Actor.PIPELINE: "learned from chat",
    Actor.USER: "by you",
    Actor.CONSOLIDATION: "tidy-up",
    Actor.ADMIN: "by the operator",
}


def facts_counted(count: int) -> str:
    """ "1 fact", "3 facts"."""
    return f"{count} fact" if count == 1 else f"{count} facts"


def all_facts(count: int) -> str:
    """ "the one fact", "all 3 facts"."""
    return "the one fact" if count == 1 else f"all {facts_counted(count)}"


def fact_line(fact: Fact) -> str:
    return f"#{fact.id} {fact.text}"


def event_line(event: FactEvent) -> str:
    when = f"{event.created_at:%Y-%m-%d %H:%M}"
    who = ACTOR_WORDS.get(event.actor, event.actor.value)
    change = event_change(event)
    guard = f" [guard: {event.guard}]" if event.guard else ""
    undone = " (undone)" if event.undone_at is not None else ""
    return f"{when} {event.final_action.value} ({who}): {change}{guard}{undone}"


def event_change(event: FactEvent) -> str:
    if event.old_text and event.new_text and event.old_text != event.new_text:
        return f'"{event.old_text}" -> "{event.new_text}"'
    text = event.new_text or event.old_text
    if text:
        return f'"{text}"'
    return "merged" if event.final_action is Action.MERGE else "-"
