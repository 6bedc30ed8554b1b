"""``memory list [page]`` and ``memory search <query>``: the caller's facts in this scope."""

from __future__ import annotations

import math
from functools import partial

from bot.commands.arguments import page_number, required_text
from bot.commands.errors import CommandError
from bot.commands.formatting import fact_line, facts_counted
from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices
from memory.records import Fact
from memory.scope import Scope
from memory.store import StoreTransaction


def page_of(tx: StoreTransaction, *, scope: Scope, page: int, size: int) -> tuple[int, list[Fact]]:
    """How many active facts ``scope`` has, and those of page ``page``, read together."""
    total = tx.facts.count(scope)
    # Past the last page nothing is read: a huge page's offset need not fit a query.
    if page > math.ceil(total / size):
        return total, []
    return total, tx.facts.list_in_scope(scope, limit=size, offset=(page - 1) * size)


class ListFacts:
    spec = CommandSpec("list", "memory list [page]", "what I remember about you here", ("ls",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        page = page_number(invocation.arguments, invocation.usage(self.spec))
        size = self._services.page_size
        total, facts = await self._services.store.read(
            partial(page_of, scope=invocation.scope, page=page, size=size)
        )
        pages = math.ceil(total / size)
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
