"""A terminal conversation with the core: one line in, the replies out.

Everything typed is addressed to the bot (as in a DM, or a mention in a room). Without a
room the session is a DM (room key ``console:dm``); ``--room NAME`` makes it group room
``console:NAME``, so room-scoped memory can be tried from a terminal. With ``stream`` an
answer is printed word by word as the model writes it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TextIO

from adapters.console.streaming import TerminalDisplay
from bot.messages import Attachment, IncomingMessage, OutgoingMessage
from bot.streaming import PacedAnswer
from memory.scope import direct_room_key

PLATFORM = "console"
QUIT_WORDS = frozenset({"/quit", "/exit", "!quit", "!exit"})

LineReader = Callable[[], Awaitable[str | None]]


class MessageHandler(Protocol):
    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]: ...


@dataclass(frozen=True, slots=True)
class ConsoleIdentity:
    user: str
    room: str | None = None

    @property
    def user_key(self) -> str:
        return f"{PLATFORM}:{self.user}"

    @property
    def room_key(self) -> str:
        return direct_room_key(PLATFORM) if self.room is None else f"{PLATFORM}:{self.room}"


class ConsoleSession:
    def __init__(
        self,
        handler: MessageHandler,
        identity: ConsoleIdentity,
        *,
        read_line: LineReader,
        output: TextIO,
        export_directory: Path,
        bot_name: str = "Mnemo",
        stream: bool = True,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._handler = handler
        self._identity = identity
        self._read_line = read_line
        self._output = output
        self._export_directory = export_directory
        self._bot_name = bot_name
        self._stream = stream
        self._clock = clock

    async def run(self) -> None:
        """Read lines until end of input or /quit."""
        while (line := await self._read_line()) is not None:
            text = line.strip()
            if text.lower() in QUIT_WORDS:
                return
            if text:
                await self.send(text)

    async def send(self, text: str) -> list[OutgoingMessage]:
        message = self.message(text)
        # No pause between words: a terminal takes them as fast as they come.
        answer = PacedAnswer(TerminalDisplay(self._output, self._bot_name), 0.0)
        if self._stream:
            message = replace(message, stream=answer)
        replies = await self._handler.handle(message)
        for number, reply in enumerate(replies):
            await self._show(reply, text_shown=number == 0 and await answer.finish(reply.text))
        return replies

    def message(self, text: str) -> IncomingMessage:
        return IncomingMessage(
            platform=PLATFORM,
            user_key=self._identity.user_key,
            display_name=self._identity.user,
            room_key=self._identity.room_key,
            text=text,
            time=self._clock(),
            is_direct=self._identity.room is None,
            mentions_bot=True,
            # Stored as the source of what is learned from it, and the write queue treats a
            # repeated id as the same message: unique across sessions, not per session.
            message_id=f"console-{uuid.uuid4().hex}",
        )

    async def _show(self, reply: OutgoingMessage, *, text_shown: bool = False) -> None:
        """Print ``reply``; with ``text_shown`` its text is on the screen already."""
        lines = [""] if text_shown else [f"{self._bot_name}> {reply.text}"]
        for attachment in reply.attachments:
            path = await asyncio.to_thread(save_attachment, attachment, self._export_directory)
            lines.append(f"(saved {path})")
        self._output.write("\n".join(lines) + "\n")
        self._output.flush()


def save_attachment(attachment: Attachment, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    # Only the file name is used, so a name with "../" cannot write elsewhere.
    path = directory / Path(attachment.filename).name
    path.write_bytes(attachment.content)
    return path


def stdin_reader(prompt: str, stream: TextIO, output: TextIO) -> LineReader:
    """Lines from ``stream`` without blocking the event loop; a prompt only on a terminal."""

    async def read_line() -> str | None:
        if stream.isatty():
            output.write(prompt)
            output.flush()
        line = await asyncio.to_thread(stream.readline)
        return line or None

    return read_line
