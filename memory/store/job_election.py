"""Which process runs a scheduled job, when several share one PostgreSQL database.

Every process schedules the maintenance jobs; when one comes due, the process that takes the
job's session-level advisory lock runs it and the others skip it. The lock is held on a
connection of its own for as long as the job runs, and PostgreSQL drops it when that
connection ends (the process died, kill -9 included), so a dead runner never blocks the job.
On SQLite one process owns the database: it always runs its jobs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from memory.store.database import Database, translate_error

# The advisory lock namespace of scheduled jobs ("Mj"; people's locks use another).
JOBS_NAMESPACE = 0x4D6A


@asynccontextmanager
async def elected(database: Database, job: str) -> AsyncIterator[bool]:
    """True inside if this process runs ``job`` now; False if another process is running it."""
    if database.dialect != "postgresql":
        yield True
        return
    key = func.hashtext(job)
    try:
        connection = await database.engine.connect()
    except SQLAlchemyError as error:
        raise translate_error(error) from error
    try:
        taken = await connection.scalar(select(func.pg_try_advisory_lock(JOBS_NAMESPACE, key)))
        await connection.commit()
        try:
            yield bool(taken)
        finally:
            if taken:
                await connection.scalar(select(func.pg_advisory_unlock(JOBS_NAMESPACE, key)))
                await connection.commit()
    finally:
        await connection.close()
