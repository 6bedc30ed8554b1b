"""``memory list [page]`` and ``memory search <query>``: the caller's facts in this scope."""

from __future__ import annotations

import math

from bot.commands.arguments import page_number, required_text
from bot.commands.errors import CommandError
from bot.commands.formatting import fact_line, facts_counted
from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices


class ListFacts:
    spec = CommandSpec("list", "memory list [page]", "what I remember about you here", ("ls",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        page = page_number(invocation.arguments, invocation.usage(self.spec))
        size = self._services.page_size
        async with self._services.store.transaction() as tx:
            total = await tx.facts.count(invocation.scope)
            pages = math.ceil(total / size)
            # Past the last page nothing is read: a huge page's offset need not fit a query.
            facts = (
                await tx.facts.list_in_scope(invocation.scope, limit=size, offset=(page - 1) * size)
                if page <= pages
                else []
            )
        if total == 0:
            return CommandReply("I don't remember anything about you here yet.")
        if not facts:
            raise CommandError(f"There are only {pages} page(s) of facts.")
        counted = facts_counted(total)
        lines = [f"What I remember about you here ({counted}, page {page} of {pages}):"]
        lines += [fact_line(fact) for fact in facts]
        if page < pages:
            lines.append(f"Next page: {invocation.prefix}memory list {page + 1}")
        return CommandReply("\n".join(lines))


class SearchFacts:
    spec = CommandSpec("search", "memory search <words>", "find what I remember", ("find",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        query = required_text(
            invocation.arguments, invocation.usage(self.spec), "What should I look for?"
        )
        found = await self._services.recaller.lookup(invocation.scope, query)
        if not found:
            return CommandReply(f'I remember nothing about you here that matches "{query}".')
        lines = [f'What I remember about "{query}":']
        lines += [fact_line(item.fact) for item in found]
        return CommandReply("\n".join(lines))
