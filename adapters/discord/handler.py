"""The message handler: authorise, normalise, generate (with typing shown, the answer
streamed into its message as it is written), deliver; and the same authorisation for edits
and deletions, which go to the core as corrections."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import replace

import discord

from adapters.discord.access import AccessPolicy
from adapters.discord.catch_up import CatchUp
from adapters.discord.commands import FAILURE_TEXT
from adapters.discord.delivery import reply_to_message
from adapters.discord.normalise import (
    TALK_TYPES,
    deletion_in,
    edit_from_message,
    incoming_from_message,
    is_addressed,
    is_from_a_bot,
    place_of,
    role_ids,
)
from adapters.discord.ports import ConversationCore
from adapters.discord.quotes import QuoteFetcher
from adapters.discord.streaming import DiscordParts, replying_to
from bot.messages import CatchUpBounds, IncomingMessage, OutgoingMessage
from bot.streaming import PacedAnswer

logger = logging.getLogger(__name__)

NEEDED_PERMISSIONS = (
    "View Channels, Send Messages, Send Messages in Threads, Read Message History and Attach Files"
)
# The reaction to an edit the bot took as a correction: it does not answer an edit again.
EDIT_REACTION = "✏️"


class MessageHandler:
    """What happens to one Discord message; ``bot_id`` reads the logged-in bot's user id.
    ``stream_interval``: the least time between edits of a streamed answer (None: answers
    come whole)."""

    def __init__(
        self,
        core: ConversationCore,
        policy: AccessPolicy,
        bot_id: Callable[[], int | None],
        catch_up: CatchUpBounds | None = None,
        stream_interval: float | None = None,
    ) -> None:
        self._core = core
        self._stream_interval = stream_interval
        self._policy = policy
        self._bot_id = bot_id
        self._quotes = QuoteFetcher()
        self.catch_up = CatchUp(core, policy, self.accept, catch_up or CatchUpBounds())

    async def on_message(self, message: discord.Message) -> None:
        incoming = self.accept(message)
        if incoming is None:
            return
        # What was said while the bot was away is learned first, so memory keeps the order.
        await self.catch_up.wait_for(message.channel.id)
        bot_id = self._bot_id()
        if bot_id is not None:
            incoming = replace(incoming, quoted=await self._quotes.chain(message, bot_id))
        answer = None
        if self._stream_interval is not None:
            answer = PacedAnswer(DiscordParts(replying_to(message)), self._stream_interval)
            incoming = replace(incoming, stream=answer)
        replies = await self.generate(message, incoming)
        try:
            if answer is not None and replies and await answer.finish(replies[0].text):
                # The answer was streamed into its message; the rest goes as usual.
                replies = replies[1:]
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

    async def on_edit(self, message: discord.Message) -> None:
        """A message whose author changed it: a correction if the core takes it so; never
        answered again, only marked with a reaction."""
        bot_id = self._bot_id()
        if bot_id is None or is_from_a_bot(message) or not self.allows(message):
            return
        edit = edit_from_message(message, bot_id)
        if edit is None or not await self._core.handle_edit(edit):
            return
        try:
            await message.add_reaction(EDIT_REACTION)
        except discord.HTTPException as error:
            logger.info("cannot react to message %s: %s", message.id, error)

    async def on_delete(self, payload: discord.RawMessageDeleteEvent, channel: object) -> None:
        deletion = deletion_in(channel, payload.message_id, payload.channel_id)
        await self._core.handle_deletion(deletion)

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
