"""History: the events of a fact and of the older versions it replaced, oldest first."""

from __future__ import annotations

from memory.records import Action, FactEvent
from memory.scope import Scope
from memory.store import StoreTransaction

# Events whose fact_id is an older version that the related fact replaced.
REPLACING_ACTIONS = (Action.UPDATE, Action.MERGE)


def read_history(scope: Scope, fact_id: int, transaction: StoreTransaction) -> list[FactEvent]:
    """Empty when the fact is not visible in ``scope``: another scope's id is an unknown id."""
    events: dict[int, FactEvent] = {}
    visited: set[int] = set()
    frontier = [fact_id]
    while frontier:
        current = frontier.pop()
        visited.add(current)
        for event in transaction.facts.events_for_fact(scope, current):
            events[event.id] = event
            older = event.fact_id
            if (
                event.final_action in REPLACING_ACTIONS
                and event.related_fact_id == current
                and older is not None
                and older not in visited
            ):
                frontier.append(older)
    return [events[event_id] for event_id in sorted(events)]
