"""``memory pause`` / ``memory resume``: stop and restart learning from the caller."""

from __future__ import annotations

from bot.commands.registry import CommandReply, CommandSpec, Invocation
from bot.commands.services import CommandServices


class PauseLearning:
    spec = CommandSpec("pause", "memory pause", "stop learning from your messages", ("stop",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        await self._services.pause.set_paused(invocation.message.user_key, True)
        return CommandReply(
            "Paused: I won't learn anything new from your messages until you send "
            f"{invocation.prefix}memory resume. What I already remember stays "
            f"(see {invocation.prefix}memory list)."
        )


class ResumeLearning:
    spec = CommandSpec("resume", "memory resume", "learn from your messages again", ("start",))

    def __init__(self, services: CommandServices) -> None:
        self._services = services

    async def run(self, invocation: Invocation) -> CommandReply:
        await self._services.pause.set_paused(invocation.message.user_key, False)
        return CommandReply("Resumed: I'll remember what you tell me about yourself again.")
