"""Cross-process locks on one person's memory, for a PostgreSQL database several processes
share: whatever changes a person's facts takes their transaction-level advisory lock first.

On SQLite the one writer already orders these transactions: nothing is taken. Two people
whose names hash alike only wait for each other (slower, never wrong).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import func, select
from sqlalchemy.orm import Session

# "Mn" as the advisory lock namespace of people (the scheduler's jobs use another).
PEOPLE_NAMESPACE = 0x4D6E


def shares_database(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _key(owner: str) -> object:
    return func.hashtext(owner)


def lock_people(session: Session, owners: Iterable[str]) -> None:
    """Wait for the people's locks (sorted, so two transactions never wait on each other in
    a circle); held until the transaction ends. Nothing on SQLite."""
    if not shares_database(session):
        return
    for owner in sorted(set(owners)):
        session.execute(select(func.pg_advisory_xact_lock(PEOPLE_NAMESPACE, _key(owner))))


def try_lock_person(session: Session, owner: str) -> bool:
    """Take the person's lock if nobody holds it (PostgreSQL only); never waits."""
    locked = session.scalar(select(func.pg_try_advisory_xact_lock(PEOPLE_NAMESPACE, _key(owner))))
    return bool(locked)
