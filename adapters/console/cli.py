"""``mnemo chat [--user NAME] [--room NAME]``: talk to the bot in a terminal."""

from __future__ import annotations

import argparse
import io
import sys
from typing import Any, TextIO

from adapters.console.session import ConsoleIdentity, ConsoleSession, stdin_reader
from bot.app import build_application
from bot.config import Config
from bot.data_folder import DataAccess
from memory.scope import DIRECT_ROOM_ID

PROMPT = "you> "


def console_name(value: str) -> str:
    """A user or room name: printable, no spaces (it becomes part of a key)."""
    cleaned = value.strip()
    if not cleaned or any(character.isspace() for character in cleaned):
        raise argparse.ArgumentTypeError(f"must be one word without spaces, got {value!r}")
    if not cleaned.isprintable():
        raise argparse.ArgumentTypeError(f"must be printable characters only, got {value!r}")
    return cleaned


def room_name(value: str) -> str:
    """A group room's name; never the direct chat's key, or the room would show DM facts."""
    cleaned = console_name(value)
    if cleaned.lower() == DIRECT_ROOM_ID:
        raise argparse.ArgumentTypeError(
            f"{cleaned!r} is the name of the direct chat: leave out --room to talk there, "
            "or pick another room name"
        )
    return cleaned


def tolerate_bad_encoding(*streams: TextIO) -> None:
    """Bytes that are not valid in the terminal's encoding become U+FFFD, both ways,
    instead of ending the session with a UnicodeDecodeError (a paste of binary junk)."""
    for stream in streams:
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")


class ChatCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "chat", help="talk to the bot in this terminal (memory as on Matrix/Discord)"
        )
        parser.add_argument(
            "--user", type=console_name, default="you", help="who you are (default: you)"
        )
        parser.add_argument(
            "--room",
            type=room_name,
            help="talk in a group room of this name instead of a direct chat",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        tolerate_bad_encoding(sys.stdin, sys.stdout)
        application = await build_application(config)
        identity = ConsoleIdentity(arguments.user, arguments.room)
        session = ConsoleSession(
            application.core,
            identity,
            read_line=stdin_reader(PROMPT, sys.stdin, sys.stdout),
            output=sys.stdout,
            export_directory=config.storage.data_dir / "exports",
            bot_name=config.chat.bot_name,
        )
        where = f"room {arguments.room}" if arguments.room else "a direct chat"
        print(
            f"{config.chat.bot_name} here: you are {identity.user} in {where}. "
            f"Try /memory help; /quit or Ctrl-D ends.",
            flush=True,
        )
        try:
            await application.start()
            await session.run()
        finally:
            await application.aclose()
        return 0
