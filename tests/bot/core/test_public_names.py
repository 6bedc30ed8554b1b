"""The public names of the core, the commands and the console adapter are the intended ones."""

from __future__ import annotations

import adapters.console
import bot.commands
import bot.core


def test_public_names() -> None:
    assert sorted(bot.core.__all__) == [
        "APOLOGY",
        "ConversationCore",
        "CoreSettings",
        "FactRecall",
        "MEMORY_APOLOGY",
        "MemoryWrites",
        "PauseSwitch",
        "Recalled",
    ]
    assert sorted(bot.commands.__all__) == [
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
    assert sorted(adapters.console.__all__) == ["ChatCommand", "ConsoleIdentity", "ConsoleSession"]
    for package in (bot.core, bot.commands, adapters.console):
        assert all(hasattr(package, name) for name in package.__all__)
