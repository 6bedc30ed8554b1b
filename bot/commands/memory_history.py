"""``memory history <n>`` (a fact's audit trail) and ``memory undo`` (the last automatic change)."""

from __future__ import annotations

from bot.commands.arguments import fact_number, not_found
from bot.commands.formatting import event_line
from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices
from bot.commands.undo_text import describe_undo


class FactHistory:
    spec = CommandSpec("history", "memory history <n>", "how a fact came to be", ("log",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        fact_id = fact_number(invocation.arguments, invocation.usage(self.spec))
        # Visibility is checked on the fact itself, so a fact without events is not reported
        # as missing, and another scope's fact reads exactly like an unknown id.
        fact = await self._services.store.read(lambda tx: tx.facts.get(invocation.scope, fact_id))
        if fact is None:
            raise not_found(fact_id, invocation.prefix)
        events = await self._services.writer.history(invocation.scope, fact_id)
        lines = [f"History of #{fact.id} ({fact.status.value}): {fact.text}"]
        lines += [event_line(event) for event in events] or ["(no recorded changes)"]
        return CommandReply("\n".join(lines))


class UndoChange:
    spec = CommandSpec("undo", "memory undo", "reverse my last automatic change here")

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        result = await self._services.writer.undo(invocation.scope)
        if result is None:
            return CommandReply("There is no automatic change here left to undo.")
        return CommandReply(describe_undo(result))
