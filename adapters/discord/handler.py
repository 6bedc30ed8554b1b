"""The message handler: authorise, normalise, generate (with typing shown), deliver."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AsyncExitStack

import discord

from adapters.discord.access import AccessPolicy
from adapters.discord.commands import FAILURE_TEXT
from adapters.discord.delivery import reply_to_message
from adapters.discord.normalise import (
    TALK_TYPES,
    incoming_from_message,
    is_addressed,
    is_from_a_bot,
    place_of,
    role_ids,
)
from adapters.discord.ports import ConversationCore
from bot.messages import IncomingMessage, OutgoingMessage

logger = logging.getLogger(__name__)

NEEDED_PERMISSIONS = (
    "View Channels, Send Messages, Send Messages in Threads, Read Message History and Attach Files"
)


class MessageHandler:
    """What happens to one Discord message; ``bot_id`` reads the logged-in bot's user id."""

    def __init__(
        self,
        core: ConversationCore,
        policy: AccessPolicy,
        bot_id: Callable[[], int | None],
    ) -> None:
        self._core = core
        self._policy = policy
        self._bot_id = bot_id

    async def on_message(self, message: discord.Message) -> None:
        incoming = self.accept(message)
        if incoming is None:
            return
        replies = await self.generate(message, incoming)
        try:
            await reply_to_message(message, replies)
        except discord.Forbidden as error:
            logger.error(
                "cannot answer in channel %s (%s): the bot needs %s there",
                message.channel.id,
                error.text,
                NEEDED_PERMISSIONS,
            )

    def accept(self, message: discord.Message) -> IncomingMessage | None:
        """The message as the core sees it, or None when the bot should stay silent."""
        bot_id = self._bot_id()
        if bot_id is None or is_from_a_bot(message) or message.type not in TALK_TYPES:
            return None
        if not is_addressed(message, bot_id) or not self.allows(message):
            return None
        incoming = incoming_from_message(message, bot_id)
        # A bare mention with no words (or only an image) has nothing to answer.
        return incoming if incoming.text else None

    def allows(self, message: discord.Message) -> bool:
        place = place_of(message.channel, is_direct=message.guild is None)
        allowed = self._policy.allows(
            message.author.id, role_ids(message.author), place.gate_ids, is_direct=place.is_direct
        )
        if not allowed:
            logger.info("ignored a message from %s (allow-lists)", message.author.id)
        return allowed

    async def generate(
        self, message: discord.Message, incoming: IncomingMessage
    ) -> list[OutgoingMessage]:
        """Ask the core, showing "typing..." in the channel while it (and the LLM) works."""
        try:
            async with AsyncExitStack() as typing:
                await show_typing(typing, message)
                return await self._core.handle(incoming)
        except Exception:
            # One failed message must not take the event loop's handler down, and the person
            # should hear that it failed rather than wait; the operator gets the traceback.
            logger.exception("the core failed on message %s", message.id)
            return [OutgoingMessage(FAILURE_TEXT, incoming.room_key, reply_to_id=str(message.id))]


async def show_typing(stack: AsyncExitStack, message: discord.Message) -> None:
    """Show "typing..." until ``stack`` closes.

    Best effort: when Discord refuses it (a permission, a hiccup) the answer still comes.
    """
    try:
        await stack.enter_async_context(message.channel.typing())
    except discord.HTTPException as error:
        logger.info("cannot show typing in channel %s: %s", message.channel.id, error)
