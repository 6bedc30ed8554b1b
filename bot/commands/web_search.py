"""``search <question>``: answer with a web search forced."""

from __future__ import annotations

from bot.commands.arguments import required_text
from bot.commands.errors import CommandError
from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices


class WebSearchCommand:
    spec = CommandSpec("search", "search <question>", "answer with a web search", ("web",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        question = required_text(
            invocation.arguments, invocation.usage(self.spec), "What should I search for?"
        )
        conversation = self._services.conversation
        if not conversation.can_search_web:
            raise CommandError(
                "Web search is not set up on this bot (the operator can set search.searxng_url)."
            )
        answer = await conversation.answer(
            invocation.message, invocation.scope, question, forced_query=question
        )
        # A search answer is part of the conversation, so everyone in the room sees it.
        return CommandReply(answer, private=False)
