"""Whether a message is for the bot, and whether it is a command.

DMs are always for the bot. In group rooms only a mention, a reply to the bot, or a command
is; everything else is people talking to each other and is left alone (not answered, not
learned from).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.messages import IncomingMessage

# Element eats a leading "/", so Matrix users type the configured prefix ("!"); Discord's
# slash commands and the console use "/". Both are accepted everywhere.
SLASH = "/"


@dataclass(frozen=True, slots=True)
class CommandText:
    """A command as typed: the prefix used, the command name, and the rest of the line."""

    prefix: str
    name: str
    arguments: str


def parse_command(text: str, prefix: str) -> CommandText | None:
    """``"!memory forget 3"`` -> ``CommandText("!", "memory", "forget 3")``; else ``None``."""
    stripped = text.strip()
    for candidate in dict.fromkeys((prefix, SLASH)):
        if not stripped.startswith(candidate):
            continue
        name, _, arguments = stripped[len(candidate) :].partition(" ")
        if name and not name[0].isspace():
            return CommandText(candidate, name.lower(), arguments.strip())
    return None


def is_for_bot(
    message: IncomingMessage, command: CommandText | None, is_known: Callable[[str], bool]
) -> bool:
    if message.is_direct or message.mentions_bot or message.reply_to_bot:
        return True
    # In a group room an unknown "!word" is probably meant for another bot: stay quiet.
    return command is not None and is_known(command.name)
