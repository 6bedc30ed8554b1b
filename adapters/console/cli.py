"""``mnemo chat [--user NAME] [--room NAME]``: talk to the bot in a terminal."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from adapters.console.session import ConsoleIdentity, ConsoleSession, stdin_reader
from bot.app import build_application
from bot.config import Config
from bot.data_folder import DataAccess

PROMPT = "you> "


def console_name(value: str) -> str:
    """A user or room name: printable, no spaces (it becomes part of a key)."""
    cleaned = value.strip()
    if not cleaned or any(character.isspace() for character in cleaned):
        raise argparse.ArgumentTypeError(f"must be one word without spaces, got {value!r}")
    return cleaned


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
            type=console_name,
            help="talk in a group room of this name instead of a direct chat",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
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
