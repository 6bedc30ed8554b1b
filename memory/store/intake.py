"""The reply path's writes, each one short transaction run whole in one call.

Taking a person's message in (write-ahead: their turn and its queued write, before anyone
answers it) and keeping the bot's answer are the two writes every reply makes, so they run as
:meth:`memory.store.database.Database.write_at_once` transactions: plain functions over a
synchronous connection, built from the same statements as the repositories'.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, bindparam, select

from memory.pausing import PAUSED, pause_key
from memory.records import Answer, ConversationTurn, Role
from memory.scope import Scope
from memory.store.conversation import (
    INSERT_ANSWER,
    INSERT_TURN,
    PERSON_TURN,
    answer_values,
    person_turn_values,
    turn_values,
)
from memory.store.pending import INSERT_PENDING, pending_values
from memory.store.schema import SettingRow

# Built once: the intake of every message reads the person's pause with it.
SETTING_VALUE = select(SettingRow.value).where(SettingRow.key == bindparam("key"))


@dataclass(frozen=True, slots=True)
class Accepted:
    """A person's message as taken in: its turn, and its queued write (``None`` when they
    paused learning or the message was taken in before)."""

    turn_id: int
    source_message_id: str
    pending_id: int | None
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class Intake:
    """A person's message to take in. ``platform_message_id`` None: the platform gave none."""

    scope: Scope
    text: str
    message_time: datetime
    queued_at: datetime
    platform_message_id: str | None = None
    author_name: str | None = None
    audience: str | None = None


def local_message_id() -> str:
    """For a message the platform gave no id: forgetting finds its turn through the id."""
    return f"local:{uuid.uuid4().hex}"


def take_in(connection: Connection, intake: Intake) -> Accepted:
    """The person's turn and (unless they paused learning) its queued write, in the caller's
    transaction, which also reads the pause (a pause committed before is always seen). A
    message with the same platform id and text taken in before is not stored or queued again
    (handed over twice)."""
    scope = intake.scope
    if intake.platform_message_id is not None:
        values = person_turn_values(scope.room, scope.owner, intake.platform_message_id)
        earlier = connection.execute(PERSON_TURN, values).one_or_none()
        if earlier is not None and earlier.text == intake.text:
            return Accepted(earlier.id, intake.platform_message_id, None, duplicate=True)
    source = intake.platform_message_id or local_message_id()
    turn = ConversationTurn(
        id=0,
        room=scope.room,
        author=scope.owner,
        role=Role.USER,
        text=intake.text,
        created_at=intake.message_time,
        platform_message_id=source,
        author_name=intake.author_name,
        audience=intake.audience,
    )
    turn_id = int(connection.execute(INSERT_TURN, turn_values(turn)).scalar_one())
    pause = connection.execute(SETTING_VALUE, {"key": pause_key(scope.owner)}).scalar()
    if pause == PAUSED:
        return Accepted(turn_id, source, None)
    values = pending_values(
        scope, intake.text, intake.message_time, intake.queued_at, source, corrects=False
    )
    pending_id = int(connection.execute(INSERT_PENDING, values).scalar_one())
    return Accepted(turn_id, source, pending_id)


def add_answer(connection: Connection, answer: Answer) -> bool:
    """The bot's answer (see :meth:`memory.store.conversation.TurnRepository.add_answer`);
    whether it was kept."""
    return connection.execute(INSERT_ANSWER, answer_values(answer)).rowcount == 1
