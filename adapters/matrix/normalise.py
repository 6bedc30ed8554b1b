"""A Matrix text event as an :class:`IncomingMessage`: the only place that knows both shapes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from adapters.matrix.mentions import mentions_bot, strip_reply_fallback
from adapters.matrix.relations import Relations
from bot.messages import IncomingMessage, MessageDeletion, MessageEdit

PLATFORM = "matrix"


def user_key(user_id: str) -> str:
    return f"{PLATFORM}:{user_id}"


def room_key(room_id: str) -> str:
    return f"{PLATFORM}:{room_id}"


def room_id_of(key: str) -> str | None:
    """``"matrix:!abc:server"`` -> ``"!abc:server"``; None for other platforms or ``matrix:dm``."""
    platform, _, room_id = key.partition(":")
    return room_id if platform == PLATFORM and room_id.startswith("!") else None


@dataclass(frozen=True, slots=True)
class TextEvent:
    """The parts of a received ``m.room.message`` that addressing and the core need."""

    room_id: str
    event_id: str
    sender: str
    sender_name: str
    content: Mapping[str, Any]
    server_timestamp_ms: int


def time_of(server_timestamp_ms: int) -> datetime:
    return datetime.fromtimestamp(server_timestamp_ms / 1000, tz=UTC)


def to_incoming(
    event: TextEvent,
    relations: Relations,
    *,
    is_direct: bool,
    bot_user_id: str,
    bot_names: Iterable[str],
    reply_to_bot: bool,
) -> IncomingMessage:
    body = event.content.get("body")
    text = strip_reply_fallback(body) if isinstance(body, str) else ""
    return IncomingMessage(
        platform=PLATFORM,
        user_key=user_key(event.sender),
        display_name=event.sender_name,
        room_key=room_key(event.room_id),
        text=text.strip(),
        time=time_of(event.server_timestamp_ms),
        is_direct=is_direct,
        mentions_bot=mentions_bot(event.content, bot_user_id, bot_names),
        reply_to_bot=reply_to_bot,
        message_id=event.event_id,
        reply_to_id=relations.reply_to_event_id,
        thread_id=relations.thread_root_id,
    )


def to_edit(event: TextEvent, relations: Relations) -> MessageEdit | None:
    """An ``m.replace`` event as the edit of its original; None when it carries no new text."""
    new_content = event.content.get("m.new_content")
    body = new_content.get("body") if isinstance(new_content, Mapping) else None
    if relations.replaces is None or not isinstance(body, str):
        return None
    return MessageEdit(
        platform=PLATFORM,
        user_key=user_key(event.sender),
        room_key=room_key(event.room_id),
        message_id=relations.replaces,
        text=body.strip(),
        time=time_of(event.server_timestamp_ms),
    )


def to_deletion(
    room_id: str, redacted_event_id: str, redacter: str, server_timestamp_ms: int
) -> MessageDeletion:
    """A redaction; Matrix says who redacted, so a moderator's redaction is told apart."""
    return MessageDeletion(
        platform=PLATFORM,
        room_key=room_key(room_id),
        message_id=redacted_event_id,
        deleted_by=user_key(redacter),
        time=time_of(server_timestamp_ms),
    )
