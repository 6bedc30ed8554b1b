"""A real full disk for SQLite: the database may not grow, and its free space is used up.

``PRAGMA max_page_count`` makes SQLite answer SQLITE_FULL ("database or disk is full"), the
same error a full file system gives, on every connection opened after the cap. Filler rows
then take the space left inside the existing pages, so the next real write cannot fit.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from sqlalchemy import event, text

from memory.errors import StorageFullError
from memory.priority import Priority
from memory.store import Store, StoreTransaction

FILLER_SIZES = (65536, 4096, 512, 64, 8, 1)


def make_filler_table(transaction: StoreTransaction) -> int:
    """The filler table made; the database's pages now."""
    transaction.session.execute(text("CREATE TABLE IF NOT EXISTS filler (b BLOB)"))
    return int(transaction.session.execute(text("PRAGMA page_count")).scalar_one())


def add_filler(size: int, transaction: StoreTransaction) -> None:
    transaction.session.execute(text("INSERT INTO filler VALUES (zeroblob(:size))"), {"size": size})


async def fill_the_disk(store: Store) -> None:
    pages = await store.write(make_filler_table)

    def cap(dbapi_connection: Any, connection_record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA max_page_count = {pages}")
        cursor.close()

    # Every connection opened after this, the writer's and the readers', is capped.
    assert store.database.write_engine is not None
    for engine in (store.database.write_engine, store.database.engine.sync_engine):
        event.listen(engine, "connect", cap)
    async with store.database.writing(Priority.REPLY):
        store.database.write_engine.dispose()
        await store.database.engine.dispose()
    for size in FILLER_SIZES:
        while True:
            try:
                await store.write(partial(add_filler, size))
            except StorageFullError:
                break
