"""Send the core's replies to Discord.

Every send carries ``AllowedMentions.none()``: the text comes from a language model, and it
must never be able to ping @everyone, a role or a person (the author included).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence

import discord

from adapters.discord.splitting import split_message
from bot.messages import Attachment, OutgoingMessage

logger = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
PRIVATE_IN_PUBLIC_NOTE = "I sent you the answer in a direct message."
DIRECT_MESSAGES_CLOSED = (
    "That answer is only for you, but I cannot send you direct messages here. "
    "Use the /memory slash command instead: only you see its replies."
)
EMPTY_COMMAND_REPLY = "Done (nothing to show)."


def as_files(attachments: Sequence[Attachment]) -> list[discord.File]:
    return [
        discord.File(io.BytesIO(attachment.content), filename=attachment.filename)
        for attachment in attachments
    ]


def pieces(reply: OutgoingMessage) -> list[str]:
    """The reply's text in Discord-sized pieces; a file-only reply gets one empty piece."""
    chunks = split_message(reply.text)
    return chunks or ([""] if reply.attachments else [])


async def reply_to_message(message: discord.Message, replies: Sequence[OutgoingMessage]) -> None:
    """Answer in the message's channel as Discord replies; private answers go by DM."""
    for reply in replies:
        if reply.private and message.guild is not None:
            await _send_privately(message, reply)
        else:
            await _send_as_reply(message, reply)


async def reply_in_channel(
    message: discord.Message, text: str, files: Sequence[discord.File] = ()
) -> None:
    """A Discord reply to ``message``; if it was deleted meanwhile, a plain message instead."""
    reference = message.to_reference(fail_if_not_exists=False)
    await message.channel.send(
        text, files=list(files), reference=reference, allowed_mentions=NO_MENTIONS
    )


async def _send_as_reply(message: discord.Message, reply: OutgoingMessage) -> None:
    chunks = pieces(reply)
    for position, chunk in enumerate(chunks):
        files = as_files(reply.attachments) if position == len(chunks) - 1 else []
        if position == 0:
            await reply_in_channel(message, chunk, files)
        else:
            await message.channel.send(chunk, files=files, allowed_mentions=NO_MENTIONS)


async def _send_privately(message: discord.Message, reply: OutgoingMessage) -> None:
    """A private answer asked for in a server channel (e.g. a typed ``!memory list``).

    Its text must not land in the channel, so it goes to the author's DMs; when those are
    closed the channel gets a pointer to the slash command, never the answer itself.
    """
    chunks = pieces(reply)
    try:
        for position, chunk in enumerate(chunks):
            files = as_files(reply.attachments) if position == len(chunks) - 1 else []
            await message.author.send(chunk, files=files, allowed_mentions=NO_MENTIONS)
    except discord.Forbidden:
        logger.info("could not DM user %s a private reply", message.author.id)
        await reply_in_channel(message, DIRECT_MESSAGES_CLOSED)
        return
    await reply_in_channel(message, PRIVATE_IN_PUBLIC_NOTE)


async def respond_to_interaction(
    interaction: discord.Interaction,
    replies: Sequence[OutgoingMessage],
    *,
    ephemeral: bool,
) -> None:
    """Follow up a deferred interaction; the first follow-up replaces "thinking...".

    ``ephemeral`` is how the interaction was deferred. Discord gives the first follow-up the
    deferred message's visibility whatever it asks for, so when a private reply (an error
    about the caller's own request, say) comes after a public defer, the public placeholder
    is deleted first and the reply is sent as a new, ephemeral message.
    """
    to_send = [reply for reply in replies if reply.text.strip() or reply.attachments]
    if not to_send:
        to_send = [OutgoingMessage(EMPTY_COMMAND_REPLY, room_key="", private=ephemeral)]
    if not ephemeral and to_send[0].private:
        await interaction.delete_original_response()
    for reply in to_send:
        chunks = pieces(reply)
        for position, chunk in enumerate(chunks):
            files = as_files(reply.attachments) if position == len(chunks) - 1 else []
            await interaction.followup.send(
                chunk,
                files=files,
                ephemeral=ephemeral or reply.private,
                allowed_mentions=NO_MENTIONS,
            )
