"""The reply path's two writes: a person's message taken in, and the bot's answer.

Taking a message in is write-ahead: the person's turn and its queued write are stored, in one
transaction that also reads the person's pause switch, before anyone answers it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import bindparam, select

from memory.pausing import PAUSED, pause_key
from memory.records import Role
from memory.scope import Scope
from memory.store.conversation import TurnRepository
from memory.store.pending import PendingWriteRepository
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


async def take_in(
    turns: TurnRepository, pending: PendingWriteRepository, intake: Intake
) -> Accepted:
    """The person's turn and (unless they paused learning) its queued write, in the caller's
    transaction, which also reads the pause (a pause committed before is always seen). A
    message with the same platform id and text taken in before is not stored or queued again
    (handed over twice)."""
    scope = intake.scope
    if intake.platform_message_id is not None:
        earlier = await turns.person_turn(scope.room, scope.owner, intake.platform_message_id)
        if earlier is not None and earlier.text == intake.text:
            return Accepted(earlier.id, intake.platform_message_id, None, duplicate=True)
    source = intake.platform_message_id or local_message_id()
    turn = await turns.add(
        scope.room,
        Role.USER,
        intake.text,
        author=scope.owner,
        created_at=intake.message_time,
        platform_message_id=source,
        author_name=intake.author_name,
        audience=intake.audience,
    )
    paused = await turns.session.execute(SETTING_VALUE, {"key": pause_key(scope.owner)})
    if paused.scalar() == PAUSED:
        return Accepted(turn.id, source, None)
    queued = await pending.enqueue(
        scope,
        intake.text,
        message_time=intake.message_time,
        now=intake.queued_at,
        source_message_id=source,
    )
    return Accepted(turn.id, source, queued.id)
