"""An answer printed on the terminal as the model writes it.

A terminal cannot take back what it printed, so each text that extends the one before is
printed as its new end only; a text that does not (a tools round's words given way to the
answer) starts a new line of the bot's.
"""

from __future__ import annotations

from typing import TextIO


class TerminalDisplay:
    """A :class:`~bot.streaming.Display` that prints ``{bot_name}> `` and the words."""

    def __init__(self, output: TextIO, bot_name: str) -> None:
        self._output = output
        self._bot_name = bot_name
        self._printed: str | None = None

    async def show(self, text: str) -> None:
        if self._printed is None:
            self._output.write(f"{self._bot_name}> {text}")
        elif text.startswith(self._printed):
            self._output.write(text[len(self._printed) :])
        else:
            self._output.write(f"\n{self._bot_name}> {text}")
        self._output.flush()
        self._printed = text
