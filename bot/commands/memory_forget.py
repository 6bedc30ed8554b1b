"""``memory forget <n>`` and ``memory forget all`` (with confirmation): final erasure."""

from __future__ import annotations

from bot.commands.arguments import fact_number, not_found
from bot.commands.errors import CommandError
from bot.commands.formatting import all_facts
from bot.commands.registry import CommandReply, CommandSpec, Invocation, split_first
from bot.commands.services import CommandServices

FORGET_ALL = "forget all"
CONFIRM_WORD = "confirm"


class ForgetFacts:
    spec = CommandSpec(
        "forget",
        "memory forget <n> | memory forget all",
        "erase one fact, or everything here, for good",
        ("delete", "rm"),
    )

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        first, rest = split_first(invocation.arguments)
        if first == "all":
            if rest.lower() == CONFIRM_WORD:
                return await self._confirm_all(invocation)
            if rest:
                raise CommandError(f"Usage: {invocation.usage(self.spec)}")
            return await self._ask_all(invocation)
        fact_id = fact_number(invocation.arguments, invocation.usage(self.spec))
        if not await self._services.writer.forget(invocation.scope, fact_id):
            raise not_found(fact_id, invocation.prefix)
        return CommandReply(f"Forgotten for good: #{fact_id}.")

    async def _ask_all(self, invocation: Invocation) -> CommandReply:
        total = await self._services.store.read(lambda tx: tx.facts.count(invocation.scope))
        if total == 0:
            return CommandReply("There is nothing to forget: I remember nothing about you here.")
        confirmations = self._services.confirmations
        confirmations.request(FORGET_ALL, invocation.scope)
        seconds = int(confirmations.window_seconds)
        return CommandReply(
            f"This erases {all_facts(total)} I remember about you here, for good, and cannot "
            f"be undone. To go ahead, send {invocation.prefix}memory forget all {CONFIRM_WORD} "
            f"within {seconds} seconds."
        )

    async def _confirm_all(self, invocation: Invocation) -> CommandReply:
        if not self._services.confirmations.confirm(FORGET_ALL, invocation.scope):
            raise CommandError(
                f"Nothing to confirm (or it took longer than "
                f"{int(self._services.confirmations.window_seconds)} seconds). "
                f"Send {invocation.prefix}memory forget all first."
            )
        erased = await self._services.writer.forget_all(invocation.scope)
        return CommandReply(f"Done: I forgot {all_facts(erased)} about you here.")
