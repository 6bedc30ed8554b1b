"""The messages a Discord message replies to (its reply chain, and its thread's first
message), as context.

Discord sends the replied-to message with the reply; older links of the chain come from the
message cache or are fetched. Only messages of the same channel count (the speaker reads that
channel), and a thread's starter message, which sits in the parent channel; forwarded
messages, which may come from anywhere, do not.
"""

from __future__ import annotations

import logging
from collections import OrderedDict

import discord

from adapters.discord.normalise import quote_of
from bot.messages import QuotedMessage

logger = logging.getLogger(__name__)

# How many earlier messages one message brings along: the chain is followed this far.
REPLY_CHAIN_LIMIT = 5
REMEMBERED_STARTERS = 256


class QuoteFetcher:
    def __init__(self) -> None:
        self._starters: OrderedDict[int, discord.Message | None] = OrderedDict()

    async def chain(self, message: discord.Message, bot_id: int) -> tuple[QuotedMessage, ...]:
        """The replied-to messages nearest first, then the thread's starter."""
        replied = await self._replied_chain(message)
        quoted = [quote_of(earlier, bot_id) for earlier in replied]
        if len(quoted) < REPLY_CHAIN_LIMIT and isinstance(message.channel, discord.Thread):
            starter = await self._starter(message.channel)
            if starter is not None and all(starter.id != earlier.id for earlier in replied):
                quoted.append(quote_of(starter, bot_id))
        return tuple(quote for quote in quoted if quote.text)

    async def _replied_chain(self, message: discord.Message) -> list[discord.Message]:
        chain: list[discord.Message] = []
        current = message
        while len(chain) < REPLY_CHAIN_LIMIT:
            earlier = await _replied(current, message.channel.id)
            if earlier is None or any(earlier.id == seen.id for seen in chain):
                break
            chain.append(earlier)
            current = earlier
        return chain

    async def _starter(self, thread: discord.Thread) -> discord.Message | None:
        """The message a thread was started from (its id is the thread's), once per thread."""
        if thread.id not in self._starters:
            self._starters[thread.id] = thread.starter_message or await _fetch(
                thread.parent, thread.id
            )
            while len(self._starters) > REMEMBERED_STARTERS:
                self._starters.popitem(last=False)
        return self._starters[thread.id]


async def _replied(message: discord.Message, channel_id: int) -> discord.Message | None:
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None
    if reference.type is discord.MessageReferenceType.forward or reference.channel_id != channel_id:
        return None
    resolved = reference.resolved or reference.cached_message
    if isinstance(resolved, discord.Message):
        return resolved
    if isinstance(resolved, discord.DeletedReferencedMessage):
        return None
    return await _fetch(message.channel, reference.message_id)


async def _fetch(channel: object, message_id: int) -> discord.Message | None:
    if not isinstance(channel, discord.abc.Messageable):
        return None
    try:
        return await channel.fetch_message(message_id)
    except discord.HTTPException as error:
        logger.debug("message %s is not readable as context: %s", message_id, error)
        return None
