"""The ports of a streamed answer.

The core hands an :class:`AnswerStream` the answer so far, as a person may see it, each
time it grows (tool calls written as text already held back); an adapter's
:class:`Display` puts a text on the screen, sending a message or editing the one it sent.
:class:`bot.streaming.pacing.PacedAnswer` joins the two at a rate the platform allows.
"""

from __future__ import annotations

from typing import Protocol


class AnswerStream(Protocol):
    def grow(self, text: str) -> None:
        """The whole answer so far (not a piece of it). Returns at once: showing it is the
        stream's own work, paced as its platform allows."""
        ...


class Display(Protocol):
    async def show(self, text: str) -> None:
        """Show ``text`` (the whole answer so far) in place of what this display showed."""
        ...
