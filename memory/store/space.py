"""Keeping SQLite's files the size of the data: free pages given back, the log kept small.

With ``auto_vacuum = INCREMENTAL`` free pages are cut off the file in short steps that replies
never wait long for; switching to it takes one full ``VACUUM``. Nothing on other databases.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncConnection

from memory.priority import Priority
from memory.store.database import Database, translate_error

INCREMENTAL = 2  # PRAGMA auto_vacuum: 0 none, 1 full, 2 incremental
# A switch at start-up copies the whole file once.
SWITCH_AT_START_UP_MAX_BYTES = 64 * 2**20
_PAGES_PER_STEP = 256


@dataclass(frozen=True, slots=True)
class DatabaseSpace:
    """The database's files: what they take on disk and what the data needs of it."""

    file_bytes: int
    log_bytes: int
    free_bytes: int
    incremental_vacuum: bool

    @property
    def live_bytes(self) -> int:
        return self.file_bytes - self.free_bytes

    @property
    def reclaimable_bytes(self) -> int:
        """Free pages and the write-ahead log (emptied by a checkpoint)."""
        return self.free_bytes + self.log_bytes


def _file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


async def _pragma(connection: AsyncConnection, statement: str) -> int:
    return int((await connection.exec_driver_sql(f"PRAGMA {statement}")).scalar_one())


async def database_space(database: Database) -> DatabaseSpace | None:
    """Sizes read from SQLite itself (pages) and from the files beside it (the log)."""
    if database.dialect != "sqlite":
        return None
    try:
        async with database.engine.connect() as connection:
            page_size = await _pragma(connection, "page_size")
            pages = await _pragma(connection, "page_count")
            free = await _pragma(connection, "freelist_count")
            mode = await _pragma(connection, "auto_vacuum")
    except SQLAlchemyError as error:
        raise translate_error(error) from error
    log_bytes = sum(
        await asyncio.gather(
            *(
                asyncio.to_thread(_file_size, database.path.with_name(database.path.name + end))
                for end in ("-wal", "-shm")
            )
        )
    )
    return DatabaseSpace(pages * page_size, log_bytes, free * page_size, mode == INCREMENTAL)


async def give_back_free_pages(database: Database) -> int:
    """Cut the free pages off the end of the file, a few hundred per short write, and
    empty the log; returns the bytes given back (0 without incremental auto-vacuum)."""
    space = await database_space(database)
    if space is None:
        return 0
    if space.incremental_vacuum and space.free_bytes > 0:
        # The writer held for one step at a time: a reply's write goes between two steps.
        while not await _vacuum_step(database):
            pass
    async with database.writing(Priority.BACKGROUND):
        await database.truncate_wal()
    return space.free_bytes if space.incremental_vacuum else 0


async def _vacuum_step(database: Database) -> bool:
    """Give back a few hundred free pages; True when none is left."""
    try:
        async with database.writing(Priority.BACKGROUND), database.engine.connect() as connection:
            await connection.exec_driver_sql(f"PRAGMA incremental_vacuum({_PAGES_PER_STEP})")
            return bool(await _pragma(connection, "freelist_count") == 0)
    except SQLAlchemyError as error:
        raise translate_error(error) from error


async def vacuum(database: Database) -> None:
    """Rewrite the whole file, switching to incremental auto-vacuum (``mnemo compact``)."""
    if database.dialect != "sqlite":
        return
    async with database.writing(Priority.BACKGROUND):
        try:
            async with database.engine.connect() as connection:
                await connection.exec_driver_sql("PRAGMA auto_vacuum=INCREMENTAL")
                await connection.exec_driver_sql("VACUUM")
        except SQLAlchemyError as error:
            raise translate_error(error) from error
        await database.truncate_wal()


async def switch_to_incremental_vacuum(database: Database) -> bool | None:
    """At start-up, switch a small database to incremental auto-vacuum: True if switched,
    False if too large (``mnemo compact`` does it), None if nothing was to do."""
    space = await database_space(database)
    if space is None or space.incremental_vacuum:
        return None
    if space.file_bytes > SWITCH_AT_START_UP_MAX_BYTES:
        return False
    await vacuum(database)
    return True
