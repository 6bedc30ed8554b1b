"""``memory <sub-command>``: the sub-commands in their own registry, and their help."""

from __future__ import annotations

from dataclasses import replace

from bot.commands.memory_export import ExportFacts
from bot.commands.memory_forget import ForgetFacts
from bot.commands.memory_history import FactHistory, UndoChange
from bot.commands.memory_listing import ListFacts, SearchFacts
from bot.commands.memory_pause import PauseLearning, ResumeLearning
from bot.commands.registry import (
    CommandRegistry,
    CommandReply,
    CommandSpec,
    Invocation,
    split_first,
)
from bot.commands.services import CommandServices
from memory.scope import ScopeMode

HELP_NAMES = ("help", "?")
PRIVACY_LINES = {
    ScopeMode.USER_ROOM: "What I remember about you is yours: only you see it, and I only use "
    "it in the room you told me (direct-message memories stay in direct messages).",
    ScopeMode.USER: "What I remember about you is yours: only you see it. It follows you "
    "across rooms, but what you tell me in direct messages stays there.",
}


class MemoryCommand:
    spec = CommandSpec(
        "memory",
        "memory <list|search|forget|undo|history|export|pause|resume|help>",
        "see and manage what I remember about you",
        ("mem", "memories"),
    )

    def __init__(self, services: CommandServices) -> None:
        self.subcommands = CommandRegistry(
            (
                ListFacts(services),
                SearchFacts(services),
                ForgetFacts(services),
                UndoChange(services),
                FactHistory(services),
                ExportFacts(services),
                PauseLearning(services),
                ResumeLearning(services),
            )
        )

    async def run(self, invocation: Invocation) -> CommandReply:
        name, rest = split_first(invocation.arguments)
        if not name or name in HELP_NAMES:
            return CommandReply(self.help(invocation.prefix, invocation.scope.mode))
        # dispatch adds the sub-command's name to the path: pass only its arguments.
        return await self.subcommands.dispatch(name, replace(invocation, arguments=rest))

    def help(self, prefix: str, mode: ScopeMode) -> str:
        lines = [
            PRIVACY_LINES[mode],
            *self.subcommands.help_lines(prefix),
            f"{prefix}memory help - this list",
            'Say "remember that ..." to have me remember something exactly as you say it.',
        ]
        return "\n".join(lines)
