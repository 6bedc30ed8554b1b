"""Whether a transaction waits for a lock (PostgreSQL), for tests that force one order of
two processes: the test lets one go on only once the other waits."""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.orm import Session

from memory.store import Store

WAITING = text("SELECT count(*) FROM pg_locks WHERE NOT granted")
# One trip to the server that waits there a little (a job's way of waiting: no await).
PAUSE = text("SELECT pg_sleep(0.02)")
# The time limit only keeps a broken test from hanging.
GUARD_SECONDS = 60.0


async def lock_waited_for(store: Store) -> bool:
    """Some transaction waits for a lock: a person's (advisory), or a row another holds."""
    return await store.read(lambda transaction: lock_waited_for_in(transaction.session))


def lock_waited_for_in(session: Session) -> bool:
    """As :func:`lock_waited_for`, asked inside a job's own transaction."""
    return bool(session.scalar(WAITING))


def hold_until(session: Session, done: Callable[[], bool]) -> None:
    """Inside a job: keep its transaction (and the locks it took) open until ``done()``.

    A job may not await, so it waits on the server, a little at a time: while each trip is
    out the event loop runs the other process's work (today the job runs in the loop's
    thread, between its queries; later in the writer's own thread)."""
    deadline = time.monotonic() + GUARD_SECONDS
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {GUARD_SECONDS:g} s")
        session.execute(PAUSE)
