"""Turn discord.py messages and interactions into the core's ``IncomingMessage``.

Only filtering and normalising happens here; what to answer is the core's business.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import discord

from bot.messages import IncomingMessage, MessageDeletion, MessageEdit, QuotedMessage

PLATFORM = "discord"
# Messages people write; joins, pins, boosts and the like are not talk.
TALK_TYPES = frozenset({discord.MessageType.default, discord.MessageType.reply})


@dataclass(frozen=True, slots=True)
class Place:
    """Where a message was said: the room for memory, the thread inside it, the gates, and
    the audience when only some of the room can read it (a private thread)."""

    room_id: int
    thread_id: int | None
    gate_ids: tuple[int, ...]
    is_direct: bool
    audience: str | None = None


def user_key(user: discord.abc.User) -> str:
    return f"{PLATFORM}:{user.id}"


def room_key(room_id: int) -> str:
    return f"{PLATFORM}:{room_id}"


def role_ids(user: discord.abc.User) -> list[int]:
    """Role ids of a server member; a DM author (a plain User) has none."""
    roles = getattr(user, "roles", None) or []
    return [role.id for role in roles]


def place_of(channel: object, *, is_direct: bool) -> Place:
    """A thread belongs to its parent channel's room, so its talk shares that memory.

    ``gate_ids`` are what the channel allow-list is checked against: the channel itself,
    the parent of a thread, and the category.
    """
    channel_id = _as_int(getattr(channel, "id", None)) or 0
    parent_id = _as_int(getattr(channel, "parent_id", None))
    category_id = _as_int(getattr(channel, "category_id", None))
    is_thread = isinstance(channel, discord.Thread) and parent_id is not None
    room_id = parent_id if is_thread and parent_id is not None else channel_id
    gates = tuple(dict.fromkeys(x for x in (channel_id, parent_id, category_id) if x is not None))
    private = is_thread and getattr(channel, "type", None) is discord.ChannelType.private_thread
    audience = room_key(channel_id) if private else None
    return Place(room_id, channel_id if is_thread else None, gates, is_direct, audience)


def _as_int(value: object) -> int | None:
    return value if isinstance(value, int) else None


def is_from_a_bot(message: discord.Message) -> bool:
    """Bots (including this one) and webhooks are never answered: no bot-to-bot loops."""
    return message.author.bot or message.webhook_id is not None


def mentions_bot(message: discord.Message, bot_id: int) -> bool:
    """A mention of the bot's user, or of the role Discord made for it when it joined."""
    if any(user.id == bot_id for user in message.mentions):
        return True
    return any(
        role.tags is not None and role.tags.bot_id == bot_id for role in message.role_mentions
    )


def replies_to_bot(message: discord.Message, bot_id: int) -> bool:
    reference = message.reference
    if reference is None:
        return False
    replied = reference.resolved if reference.resolved is not None else reference.cached_message
    return isinstance(replied, discord.Message) and replied.author.id == bot_id


def is_addressed(message: discord.Message, bot_id: int) -> bool:
    """Every DM is for the bot; in servers only a mention or a reply to the bot is."""
    if message.guild is None:
        return True
    return mentions_bot(message, bot_id) or replies_to_bot(message, bot_id)


def clean_text(message: discord.Message, bot_id: int) -> str:
    """The text without the mention that addressed the bot; other mentions as @names."""
    text = message.content
    bot_mentions = [rf"<@!?{bot_id}>"] + [
        rf"<@&{role.id}>"
        for role in message.role_mentions
        if role.tags is not None and role.tags.bot_id == bot_id
    ]
    for pattern in bot_mentions:
        text = re.sub(pattern, " ", text)
    for user in message.mentions:
        if user.id != bot_id:
            text = re.sub(rf"<@!?{user.id}>", f"@{user.display_name}", text)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def incoming_from_message(message: discord.Message, bot_id: int) -> IncomingMessage:
    place = place_of(message.channel, is_direct=message.guild is None)
    reference = message.reference
    return IncomingMessage(
        platform=PLATFORM,
        user_key=user_key(message.author),
        display_name=message.author.display_name,
        room_key=room_key(place.room_id),
        text=clean_text(message, bot_id),
        time=message.created_at,
        is_direct=place.is_direct,
        mentions_bot=mentions_bot(message, bot_id),
        reply_to_bot=replies_to_bot(message, bot_id),
        message_id=str(message.id),
        reply_to_id=None
        if reference is None or reference.message_id is None
        else str(reference.message_id),
        thread_id=None if place.thread_id is None else str(place.thread_id),
        audience=place.audience,
    )


def edit_from_message(message: discord.Message, bot_id: int) -> MessageEdit | None:
    """A message whose text its author changed; None for other updates (an embed added)."""
    if message.edited_at is None:
        return None
    place = place_of(message.channel, is_direct=message.guild is None)
    return MessageEdit(
        platform=PLATFORM,
        user_key=user_key(message.author),
        room_key=room_key(place.room_id),
        message_id=str(message.id),
        text=clean_text(message, bot_id),
        time=message.edited_at,
    )


def deletion_in(channel: object, message_id: int, channel_id: int) -> MessageDeletion:
    """Discord does not say who deleted a message: it counts as the author's deletion."""
    room_id = place_of(channel, is_direct=False).room_id if channel is not None else channel_id
    return MessageDeletion(
        platform=PLATFORM,
        room_key=room_key(room_id),
        message_id=str(message_id),
        deleted_by=None,
        time=discord.utils.utcnow(),
    )


def quote_of(message: discord.Message, bot_id: int) -> QuotedMessage:
    return QuotedMessage(
        message_id=str(message.id),
        author_name=message.author.display_name,
        text=clean_text(message, bot_id),
        time=message.created_at,
        from_bot=message.author.id == bot_id,
    )


def place_of_interaction(interaction: discord.Interaction) -> Place:
    channel = interaction.channel
    is_direct = interaction.guild_id is None
    if channel is None:
        channel_id = interaction.channel_id or 0
        return Place(channel_id, None, (channel_id,), is_direct)
    return place_of(channel, is_direct=is_direct)


def incoming_from_interaction(interaction: discord.Interaction, text: str) -> IncomingMessage:
    """A slash command as the text command the core understands (``/memory list``).

    A slash command is addressed to the bot by definition, hence ``mentions_bot``.
    """
    place = place_of_interaction(interaction)
    return IncomingMessage(
        platform=PLATFORM,
        user_key=user_key(interaction.user),
        display_name=interaction.user.display_name,
        room_key=room_key(place.room_id),
        text=text,
        time=interaction.created_at,
        is_direct=place.is_direct,
        mentions_bot=True,
        message_id=str(interaction.id),
        thread_id=None if place.thread_id is None else str(place.thread_id),
        audience=place.audience,
    )
