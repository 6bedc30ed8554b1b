"""How the result of ``memory undo`` reads in chat."""

from __future__ import annotations

from bot.commands.formatting import ACTOR_WORDS
from memory.write.undo import UndoResult


def describe_undo(result: UndoResult) -> str:
    undone = result.undone
    who = ACTOR_WORDS.get(undone.actor, undone.actor.value)
    lines = [
        f"Undone: the {undone.final_action.value} of {undone.created_at:%Y-%m-%d %H:%M} ({who})."
    ]
    lines += [f'Back again: #{fact.id} "{fact.text}"' for fact in result.restored]
    lines += [f'No longer remembered: #{fact.id} "{fact.text}"' for fact in result.removed]
    return "\n".join(lines)
