"""Which process runs a scheduled job, when several share one PostgreSQL database.

The one that takes the job's session-level advisory lock runs it; PostgreSQL drops the lock
with its connection (kill -9 included), so a dead runner never blocks the job.
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
