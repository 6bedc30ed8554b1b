"""The console adapter: a terminal REPL over the same core as Matrix and Discord."""

from adapters.console.cli import ChatCommand
from adapters.console.session import ConsoleIdentity, ConsoleSession

__all__ = ["ChatCommand", "ConsoleIdentity", "ConsoleSession"]
