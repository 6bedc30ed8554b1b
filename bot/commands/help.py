"""``help``: the top-level commands."""

from __future__ import annotations

from bot.commands.registry import CommandRegistry, CommandReply, CommandSpec, Invocation


class HelpCommand:
    spec = CommandSpec("help", "help", "this list", ("commands",))

    def __init__(self, registry: CommandRegistry) -> None:
        self._registry = registry

    async def run(self, invocation: Invocation) -> CommandReply:
        lines = [
            "Talk to me in plain words. Commands:",
            *self._registry.help_lines(invocation.prefix),
        ]
        return CommandReply("\n".join(lines))
