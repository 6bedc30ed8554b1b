"""The durable queue of messages waiting for memory extraction, and the claims on its rows.

A row is deleted in the transaction that applies its facts, only while its worker's claim
holds; a dead worker's row is claimable again after the lease.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from datetime import datetime
from types import SimpleNamespace as Inserted
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Row,
    String,
    and_,
    bindparam,
    delete,
    exists,
    func,
    insert,
    not_,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session, aliased

from memory.pausing import PAUSED, pause_key
from memory.records import PendingWrite
from memory.scope import Scope
from memory.store.facts import in_visible_rooms
from memory.store.people_lock import shares_database, try_lock_person
from memory.store.schema import (
    PENDING_WRITES,
    SETTINGS,
    PendingWriteRow,
    UTCDateTime,
    insert_unless,
    record_of,
    rowcount,
)


def next_row() -> ColumnElement[bool]:
    """The row is its person's next at ``:now``: due, no live claim on the person, and every
    earlier row of theirs waiting after an error starting with ``:passing_error``."""
    now = bindparam("now", type_=UTCDateTime())
    passing_error = bindparam("passing_error", type_=String())
    other = aliased(PendingWriteRow)
    person_busy = exists().where(
        other.owner == PendingWriteRow.owner,
        other.claimed_by.is_not(None),
        other.claimed_until > now,
    )
    error = func.coalesce(other.last_error, "")
    lets_pass = and_(
        other.next_attempt_at > now,
        func.substr(error, 1, func.length(passing_error)) == passing_error,
    )
    earlier_waits = exists().where(
        other.owner == PendingWriteRow.owner, other.id < PendingWriteRow.id, not_(lets_pass)
    )
    return and_(PendingWriteRow.next_attempt_at <= now, ~person_busy, ~earlier_waits)


# Built once (a claim for every queued message): the next rows of anyone but some people,
# and the next row of one person (again under the person's lock, on PostgreSQL).
NEXT_ROWS = (
    select(PENDING_WRITES)
    .where(next_row(), PENDING_WRITES.c.owner.not_in(bindparam("skip_owners", expanding=True)))
    .order_by(PENDING_WRITES.c.id)
    .limit(bindparam("candidates", type_=Integer()))
)
NEXT_ROW_OF = select(PENDING_WRITES).where(next_row(), PENDING_WRITES.c.owner == bindparam("owner"))
NEXT_ROW_OF_LOCKED = NEXT_ROW_OF.with_for_update(skip_locked=True, of=PENDING_WRITES)
INSERT_PENDING = insert(PENDING_WRITES).returning(PENDING_WRITES.c.id)
# Built once: every message a person sends queues one, unless they paused learning, in one
# statement (``MemoryWriter.accept``): the intake reads no setting of its own.
INSERT_PENDING_UNLESS_PAUSED = insert_unless(
    PENDING_WRITES, SETTINGS.c.key == bindparam("pause_key"), SETTINGS.c.value == PAUSED
)


def pending_values(
    scope: Scope,
    text: str,
    message_time: datetime,
    now: datetime,
    source_message_id: str | None,
    corrects: bool,
) -> dict[str, Any]:
    """The columns of a newly queued write: due now, unclaimed."""
    return {
        "owner": scope.owner,
        "room": scope.room,
        "text": text,
        "message_time": message_time,
        "source_message_id": source_message_id,
        "attempts": 0,
        "next_attempt_at": now,
        "last_error": None,
        "created_at": now,
        "claimed_by": None,
        "claimed_until": None,
        "corrects": corrects,
    }


class PendingWriteRepository:
    def __init__(self, session: Session) -> None:
        self.session = session

    def enqueue(
        self,
        scope: Scope,
        text: str,
        *,
        message_time: datetime,
        now: datetime,
        source_message_id: str | None = None,
        corrects: bool = False,
    ) -> PendingWrite:
        """``corrects``: the row is an edit of the message ``source_message_id``."""
        values = pending_values(scope, text, message_time, now, source_message_id, corrects)
        pending_id = int(self.session.execute(INSERT_PENDING, values).scalar_one())
        return record_of(PendingWrite, Inserted(id=pending_id, **values))

    def enqueue_unless_paused(
        self, scope: Scope, text: str, *, message_time: datetime, now: datetime, source: str
    ) -> PendingWrite | None:
        """:meth:`enqueue` a person's message, or nothing if they paused learning."""
        values = pending_values(scope, text, message_time, now, source, corrects=False)
        paused = {"pause_key": pause_key(scope.owner)}
        found = self.session.execute(INSERT_PENDING_UNLESS_PAUSED, values | paused)
        pending_id = found.scalar_one_or_none()
        if pending_id is None:
            return None
        return record_of(PendingWrite, Inserted(id=int(pending_id), **values))

    def due(self, now: datetime, *, limit: int = 50) -> list[PendingWrite]:
        """Queued writes whose next attempt is due, oldest first."""
        query = (
            select(PendingWriteRow)
            .where(PendingWriteRow.next_attempt_at <= now)
            .order_by(PendingWriteRow.id)
            .limit(limit)
        )
        return [record_of(PendingWrite, row) for row in self.session.scalars(query).all()]

    def count(self) -> int:
        return len(self.session.scalars(select(PendingWriteRow.id)).all())

    def claim_next(
        self,
        worker: str,
        *,
        now: datetime,
        until: datetime,
        passing_error: str,
        owner: str | None = None,
        skip_owners: Collection[str] = (),
        candidates: int = 16,
    ) -> PendingWrite | None:
        """Claim the next row of anyone but ``skip_owners`` (or of ``owner``), or ``None``.

        On PostgreSQL each candidate's advisory lock is tried first and the row read again
        ``FOR UPDATE SKIP LOCKED``: never two live claims of one person across processes.
        """
        values: dict[str, object] = {"now": now, "passing_error": passing_error}
        if owner is None:
            query = NEXT_ROWS
            values.update(skip_owners=list(skip_owners), candidates=candidates)
        else:
            query = NEXT_ROW_OF
            values.update(owner=owner)
        for candidate in self.session.execute(query, values).all():
            row = self._locked_again(candidate, values)
            if row is not None and self._take(row.id, worker, now=now, until=until):
                return replace(record_of(PendingWrite, row), claimed_by=worker, claimed_until=until)
        return None

    def _locked_again(self, candidate: Row[Any], values: dict[str, object]) -> Row[Any] | None:
        """On PostgreSQL, the candidate's person locked and their next row read again under
        the lock (None: another process has them); on SQLite, the candidate itself."""
        if not shares_database(self.session):
            return candidate
        if not try_lock_person(self.session, candidate.owner):
            return None
        again = {**values, "owner": candidate.owner}
        return self.session.execute(NEXT_ROW_OF_LOCKED, again).first()

    def _take(self, pending_id: int, worker: str, *, now: datetime, until: datetime) -> bool:
        """Claim one row unless someone holds a live claim on it (checked in the UPDATE)."""
        result = self.session.execute(
            update(PendingWriteRow)
            .where(
                PendingWriteRow.id == pending_id,
                or_(
                    PendingWriteRow.claimed_by.is_(None),
                    PendingWriteRow.claimed_until <= now,
                ),
            )
            .values(claimed_by=worker, claimed_until=until)
            .execution_options(synchronize_session=False)
        )
        return rowcount(result) == 1

    def revise_unclaimed(self, owner: str, room: str, source_message_id: str, text: str) -> bool:
        """Give a message still waiting in the queue (not claimed) its edited text, so the
        edit is learned instead of the old words; False if there is no such row."""
        result = self.session.execute(
            update(PendingWriteRow)
            .where(
                PendingWriteRow.owner == owner,
                PendingWriteRow.room == room,
                PendingWriteRow.source_message_id == source_message_id,
                PendingWriteRow.claimed_by.is_(None),
                PendingWriteRow.corrects.is_(False),
            )
            .values(text=text)
            .execution_options(synchronize_session=False)
        )
        return rowcount(result) > 0

    def complete_claimed(self, pending_id: int, worker: str) -> bool:
        """Drop a processed row, in the transaction that applies its facts, only if it is
        still there and still claimed by ``worker``; False means: apply nothing."""
        result = self.session.execute(
            delete(PendingWriteRow).where(
                PendingWriteRow.id == pending_id, PendingWriteRow.claimed_by == worker
            )
        )
        return rowcount(result) == 1

    def reschedule(
        self, pending_id: int, worker: str, *, error: str, next_attempt_at: datetime
    ) -> bool:
        """Count a failed attempt and release the claim; False if the row is gone or no
        longer ``worker``'s (forgotten, or taken over after the lease ended)."""
        result = self.session.execute(
            update(PendingWriteRow)
            .where(PendingWriteRow.id == pending_id, PendingWriteRow.claimed_by == worker)
            .values(
                attempts=PendingWriteRow.attempts + 1,
                last_error=error,
                next_attempt_at=next_attempt_at,
                claimed_by=None,
                claimed_until=None,
            )
            .execution_options(synchronize_session=False)
        )
        return rowcount(result) == 1

    def release_claims(self, worker: str | None = None) -> int:
        """Release the claims of ``worker``, or every claim (SQLite start-up)."""
        query = update(PendingWriteRow).where(PendingWriteRow.claimed_by.is_not(None))
        if worker is not None:
            query = query.where(PendingWriteRow.claimed_by == worker)
        result = self.session.execute(
            query.values(claimed_by=None, claimed_until=None).execution_options(
                synchronize_session=False
            )
        )
        return rowcount(result)

    def discard_for_scope(self, scope: Scope) -> int:
        """Drop the queued writes of one scope, claimed or not (``forget all``)."""
        result = self.session.execute(
            delete(PendingWriteRow).where(
                PendingWriteRow.owner == scope.owner,
                in_visible_rooms(scope, PendingWriteRow.room),
            )
        )
        return rowcount(result)
