"""An answer shown on Discord as the model writes it: one message edited as it grows.

The first part is sent as soon as there is text (a reply to the person's message, or the
follow-up that replaces a slash command's "thinking..."), then edited at most about once a
second (:class:`~bot.streaming.PacedAnswer`; discord.py sleeps out a 429's retry-after, and
the next edit waits for it). Past Discord's 2,000 characters the answer goes on in a new
message, cut where :func:`~adapters.discord.splitting.split_message` cuts a long reply, so
the finished answer reads as if it had been sent whole. Every message and edit carries
``AllowedMentions.none()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import discord

from adapters.discord.delivery import NO_MENTIONS
from adapters.discord.splitting import split_message

# About once a second: Discord allows five message edits per channel in five seconds.
EDIT_INTERVAL_SECONDS = 1.0


class SentPart(Protocol):
    """A message the bot sent (``discord.Message`` or ``discord.WebhookMessage``)."""

    async def edit(self, *, content: str, allowed_mentions: discord.AllowedMentions) -> object: ...

    async def delete(self) -> None: ...


SendPart = Callable[[int, str], Awaitable[SentPart]]


class DiscordParts:
    """A :class:`~bot.streaming.Display`: the answer in Discord-sized messages, sent by
    ``send`` (given the part's number and text) and edited as they change."""

    def __init__(self, send: SendPart) -> None:
        self._send = send
        self._sent: list[SentPart] = []
        self._texts: list[str] = []

    async def show(self, text: str) -> None:
        parts = split_message(text)
        for number, part in enumerate(parts):
            if number == len(self._sent):
                self._sent.append(await self._send(number, part))
                self._texts.append(part)
            elif self._texts[number] != part:
                await self._sent[number].edit(content=part, allowed_mentions=NO_MENTIONS)
                self._texts[number] = part
        # An answer that became shorter than what was shown (a tools round's words).
        while len(self._sent) > max(1, len(parts)):
            await self._sent.pop().delete()
            self._texts.pop()


def replying_to(message: discord.Message) -> SendPart:
    """Parts in ``message``'s channel, the first as a reply to it."""

    async def send(number: int, text: str) -> SentPart:
        if number > 0:
            return await message.channel.send(text, allowed_mentions=NO_MENTIONS)
        reference = message.to_reference(fail_if_not_exists=False)
        return await message.channel.send(text, reference=reference, allowed_mentions=NO_MENTIONS)

    return send


def following_up(interaction: discord.Interaction) -> SendPart:
    """Parts as follow-ups of a deferred interaction (the first replaces "thinking...")."""

    async def send(number: int, text: str) -> SentPart:
        return await interaction.followup.send(text, wait=True, allowed_mentions=NO_MENTIONS)

    return send
