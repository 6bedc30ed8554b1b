"""What every adapter produces and consumes: platform events normalised to these types."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime

from bot.streaming.base import AnswerStream
from memory.scope import Scope, ScopeMode, direct_room_key
from memory.text import valid_text


def make_strings_valid(record: IncomingMessage | OutgoingMessage | MessageEdit) -> None:
    for each in fields(record):
        value = getattr(record, each.name)
        if isinstance(value, str):
            object.__setattr__(record, each.name, valid_text(value))


@dataclass(frozen=True, slots=True)
class QuotedMessage:
    """A message the incoming one replies to, or the root of its thread: context, not memory.

    Adapters include only messages of the same room that the speaker could read.
    """

    message_id: str
    author_name: str
    text: str
    time: datetime
    from_bot: bool = False


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """A message as the core sees it, whatever platform it came from.

    ``room_key`` of a DM is ``"<platform>:dm"`` (see :func:`memory.scope.direct_room_key`),
    so a person's DM memory survives a re-created DM room.

    Who could read a group room's earlier turns, for the shared context of its prompts:
    ``audience`` names a narrower place inside the room that only its own members can read (a
    Discord private thread), None for the whole room; ``shared_since`` is when the history every
    current member can read begins (Matrix history visibility "joined" or "invited"), None when
    they can read all of it. ``quoted`` are the messages it replies to, nearest first.

    ``stream``, when the adapter gives one, is where the answer is shown as it is written;
    the answer the core returns then finishes what the stream showed.
    """

    platform: str
    user_key: str
    display_name: str
    room_key: str
    text: str
    time: datetime
    is_direct: bool
    mentions_bot: bool = False
    reply_to_bot: bool = False
    message_id: str | None = None
    reply_to_id: str | None = None
    thread_id: str | None = None
    audience: str | None = None
    shared_since: datetime | None = None
    quoted: tuple[QuotedMessage, ...] = ()
    stream: AnswerStream | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Where every message enters the core: made valid once, for every layer below.
        make_strings_valid(self)

    def scope(self, mode: ScopeMode = ScopeMode.USER_ROOM) -> Scope:
        room = direct_room_key(self.platform) if self.is_direct else self.room_key
        return Scope(self.user_key, room, mode)


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    content: bytes
    media_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """A reply for the adapter to send. ``private`` asks for an ephemeral/only-you reply."""

    text: str
    room_key: str
    reply_to_id: str | None = None
    thread_id: str | None = None
    private: bool = False
    attachments: tuple[Attachment, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        # A model's JSON can hold "\\udc80" too; no adapter can send that.
        make_strings_valid(self)


@dataclass(frozen=True, slots=True)
class MessageEdit:
    """A person changed the text of an earlier message (``message_id``) to ``text``.

    ``user_key`` is who edited it: an edit by anyone but the author changes nothing.
    """

    platform: str
    user_key: str
    room_key: str
    message_id: str
    text: str
    time: datetime

    def __post_init__(self) -> None:
        make_strings_valid(self)


@dataclass(frozen=True, slots=True)
class MessageDeletion:
    """A message was deleted. ``deleted_by`` is who deleted it, or None when the platform does
    not say (Discord): then it counts as the author's own deletion."""

    platform: str
    room_key: str
    message_id: str
    deleted_by: str | None
    time: datetime


@dataclass(frozen=True, slots=True)
class CatchUpBounds:
    """What an adapter learns from after a restart: messages for the bot at most ``hours``
    old, and at most ``messages_per_room`` of them per room (the newest)."""

    hours: float = 24.0
    messages_per_room: int = 50

    @property
    def enabled(self) -> bool:
        return self.hours > 0 and self.messages_per_room > 0
