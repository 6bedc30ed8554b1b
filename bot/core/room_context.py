"""The conversation context of a reply: the earlier turns and quoted messages its prompt carries.

In a DM, the turns between this person and the bot only: all of a platform's DMs share one
room key. In a group room, the room's recent turns with the bot by anyone there, each with its
speaker's name, as far as everyone in the room could read them: the turns of a private thread
stay in that thread, and turns from before the history every member can read are left out.
DM turns never reach a group prompt: they are kept under the DM room key, which no group
message has. Recalled facts are not context; they stay the speaker's own (the recaller).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from bot.messages import IncomingMessage, QuotedMessage
from memory.errors import StoreError
from memory.records import ConversationTurn, Role
from memory.store import Store, StoreTransaction

log = logging.getLogger(__name__)

# A quoted message is context, not the question: a long one is cut to this many characters.
QUOTE_CHARS = 1000


def turns_in(
    transaction: StoreTransaction,
    message: IncomingMessage,
    room: str,
    *,
    limit: int,
    leave_out: int | None = None,
) -> list[ConversationTurn]:
    """The turns that go with ``message``'s reply, oldest first, read in ``transaction``;
    ``leave_out`` is the turn of the message being answered (stored before the reply)."""
    if limit == 0:
        return []
    # One more than the limit, in case the newest is the message being answered.
    read = limit + (leave_out is not None)
    if message.is_direct:
        turns = transaction.turns.recent_of(room, message.user_key, limit=read)
    else:
        turns = transaction.turns.recent_shared(
            room, audience=message.audience, since=message.shared_since, limit=read
        )
    return [turn for turn in turns if turn.id != leave_out][-limit:]


async def read_turns(
    store: Store, message: IncomingMessage, room: str, *, limit: int, leave_out: int | None
) -> list[ConversationTurn]:
    """:func:`turns_in`, in a read transaction of its own; none if the store fails (logged)."""
    try:
        return await store.read(
            lambda transaction: turns_in(
                transaction, message, room, limit=limit, leave_out=leave_out
            )
        )
    except StoreError as error:
        # Context only: the reply can do without it.
        log.error("could not read the turns of %s in %s: %s", message.user_key, room, error)
        return []


def unseen_quotes(
    quoted: Sequence[QuotedMessage], turns: Sequence[ConversationTurn]
) -> list[QuotedMessage]:
    """``quoted`` oldest first, without those the turns already hold, each cut to size."""
    turn_ids = {turn.platform_message_id for turn in turns if turn.platform_message_id}
    answers = {turn.text for turn in turns if turn.role is Role.ASSISTANT}
    unseen = [
        quote
        for quote in quoted
        if quote.message_id not in turn_ids and not (quote.from_bot and quote.text in answers)
    ]
    return [cut(quote) for quote in reversed(unseen)]


def cut(quote: QuotedMessage) -> QuotedMessage:
    if len(quote.text) <= QUOTE_CHARS:
        return quote
    return replace(quote, text=quote.text[:QUOTE_CHARS] + "...")
