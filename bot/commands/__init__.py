"""Chat commands: a registry of named commands with aliases and usage strings.

Every command acts on the caller's own facts in the caller's scope; none takes another
person as an argument. A :class:`CommandError` raised anywhere in a command becomes the reply.
"""

from bot.commands.confirmation import Confirmations
from bot.commands.errors import CommandError
from bot.commands.help import HelpCommand
from bot.commands.memory_group import MemoryCommand
from bot.commands.registry import (
    Command,
    CommandRegistry,
    CommandReply,
    CommandSpec,
    Invocation,
)
from bot.commands.remember import RememberCommand, remember_that
from bot.commands.services import CommandServices, Conversation
from bot.commands.web_search import WebSearchCommand


def build_command_registry(services: CommandServices) -> CommandRegistry:
    registry = CommandRegistry(
        (MemoryCommand(services), WebSearchCommand(services), RememberCommand(services))
    )
    registry.register(HelpCommand(registry))
    return registry


__all__ = [
    "Command",
    "CommandError",
    "CommandRegistry",
    "CommandReply",
    "CommandServices",
    "CommandSpec",
    "Confirmations",
    "Conversation",
    "Invocation",
    "build_command_registry",
    "remember_that",
]
