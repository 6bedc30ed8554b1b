"""``mnemo chat [--user NAME] [--room NAME]``: talk to the bot in a terminal.

The terminal holds the conversation alone: the log goes to ``chat.log`` in the data folder,
and only its warnings and errors are shown on the terminal too.
"""

from __future__ import annotations

import argparse
import io
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from adapters.console.session import ConsoleIdentity, ConsoleSession, stdin_reader
from bot.app import build_application
from bot.config import Config
from bot.data_folder import DataAccess
from memory.scope import DIRECT_ROOM_ID

PROMPT = "you> "
LOG_NAME = "chat.log"


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


@contextmanager
def log_to_file(path: Path) -> Iterator[None]:
    """The log's lines go to ``path``; the terminal keeps only warnings and errors."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    terminal = [handler for handler in root.handlers if type(handler) is logging.StreamHandler]
    levels = [handler.level for handler in terminal]
    for handler in terminal:
        handler.setLevel(max(logging.WARNING, root.level))
    to_file = logging.FileHandler(path, encoding="utf-8")
    to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(to_file)
    try:
        yield
    finally:
        root.removeHandler(to_file)
        to_file.close()
        for handler, level in zip(terminal, levels, strict=True):
            handler.setLevel(level)


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
        with log_to_file(config.storage.data_dir / LOG_NAME):
            return await self._chat(arguments, config)

    async def _chat(self, arguments: argparse.Namespace, config: Config) -> int:
        application = await build_application(config)
        identity = ConsoleIdentity(arguments.user, arguments.room)
        session = ConsoleSession(
            application.core,
            identity,
            read_line=stdin_reader(PROMPT, sys.stdin, sys.stdout),
            output=sys.stdout,
            export_directory=config.storage.data_dir / "exports",
            bot_name=config.chat.bot_name,
            stream=config.chat.streams_on("console"),
        )
        where = f"room {arguments.room}" if arguments.room else "a direct chat"
        log = config.storage.data_dir / LOG_NAME
        print(
            f"{config.chat.bot_name} here: you are {identity.user} in {where}. "
            f"Try /memory help; /quit or Ctrl-D ends. (The log: {log})",
            flush=True,
        )
        try:
            await application.start()
            await session.run()
        finally:
            await application.aclose()
        return 0
