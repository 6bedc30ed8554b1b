"""Commands by name and alias, with usage strings, and the single place errors are caught."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from bot.commands.errors import CommandError
from bot.messages import Attachment, IncomingMessage
from memory.scope import Scope

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """``usage`` is written without the prefix: ``"memory forget <n>"``."""

    name: str
    usage: str
    summary: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CommandReply:
    text: str
    attachments: tuple[Attachment, ...] = ()
    # Command output is about the caller's own memory: only they should see it.
    private: bool = True


@dataclass(frozen=True, slots=True)
class Invocation:
    """One command call: who, where, with which prefix, and the rest of the line."""

    message: IncomingMessage
    scope: Scope
    prefix: str
    arguments: str
    path: tuple[str, ...] = field(default_factory=tuple)

    def usage(self, spec: CommandSpec) -> str:
        return prefixed(self.prefix, spec.usage)

    def shifted(self, name: str, arguments: str) -> Invocation:
        """The invocation a sub-command sees: its own name consumed."""
        return replace(self, arguments=arguments, path=(*self.path, name))


class Command(Protocol):
    @property
    def spec(self) -> CommandSpec: ...

    async def run(self, invocation: Invocation) -> CommandReply: ...


def prefixed(prefix: str, usage: str) -> str:
    """``usage`` with the command prefix on each alternative ("a | b" -> "!a | !b")."""
    return " | ".join(f"{prefix}{alternative}" for alternative in usage.split(" | "))


def split_first(arguments: str) -> tuple[str, str]:
    first, _, rest = arguments.strip().partition(" ")
    return first.lower(), rest.strip()


class CommandRegistry:
    def __init__(self, commands: Iterable[Command] = ()) -> None:
        self._commands: list[Command] = []
        self._by_name: dict[str, Command] = {}
        for command in commands:
            self.register(command)

    def register(self, command: Command) -> None:
        for name in (command.spec.name, *command.spec.aliases):
            if name in self._by_name:
                raise ValueError(f"command name {name!r} registered twice")
            self._by_name[name] = command
        self._commands.append(command)

    @property
    def commands(self) -> Sequence[Command]:
        return tuple(self._commands)

    def resolve(self, name: str) -> Command | None:
        return self._by_name.get(name.lower())

    def knows(self, name: str) -> bool:
        return self.resolve(name) is not None

    def help_lines(self, prefix: str) -> list[str]:
        return [f"{prefixed(prefix, c.spec.usage)} - {c.spec.summary}" for c in self._commands]

    async def dispatch(self, name: str, invocation: Invocation) -> CommandReply:
        """Run command ``name``; a CommandError anywhere inside becomes the reply."""
        try:
            command = self.resolve(name)
            if command is None:
                raise CommandError(self.unknown(name, invocation))
            return await command.run(invocation.shifted(name, invocation.arguments))
        except CommandError as error:
            return CommandReply(error.user_message)

    def unknown(self, name: str, invocation: Invocation) -> str:
        """Names as they are typed: a sub-command with its group (``!memory list``)."""

        def typed(command_name: str) -> str:
            return invocation.prefix + " ".join((*invocation.path, command_name))

        known = ", ".join(typed(c.spec.name) for c in self._commands)
        return f"I don't know the command {typed(name)}. Commands: {known}."
