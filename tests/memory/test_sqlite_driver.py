"""The SQLite driver: one trip to the connection's thread per statement, the DBAPI's answers
unchanged (rows, counts, row ids, errors), and connections kept open under load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError

from memory.store.database import SQLITE_POOL_SIZE, Database


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    opened = Database(tmp_path / "driver.sqlite3")
    async with opened.transaction() as session:
        await session.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)"))
        await session.execute(text("INSERT INTO t (v) VALUES ('a'), ('b'), ('c')"))
    yield opened
    await opened.aclose()


class Trips:
    """Counts the calls sent to aiosqlite connections' threads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original: Callable[..., Awaitable[Any]] = aiosqlite.Connection._execute

        async def counted(
            connection: aiosqlite.Connection, function: Callable[..., Any], *args: Any
        ) -> Any:
            self.count += 1
            return await original(connection, function, *args)

        monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)


async def test_a_select_is_one_trip_to_the_connections_thread(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with database.engine.connect() as connection:
        await connection.execute(text("SELECT 1"))  # the connection is open, its BEGIN done
        trips = Trips(monkeypatch)
        rows = (await connection.execute(text("SELECT v FROM t ORDER BY id"))).all()
    # SQLAlchemy's aiosqlite cursor took four: cursor, execute, fetchall, close.
    assert trips.count == 1 + 1  # the statement, then the rollback of the connection's end
    assert [row.v for row in rows] == ["a", "b", "c"]


async def test_counts_and_row_ids_are_the_dbapis(database: Database) -> None:
    async with database.transaction() as session:
        inserted = await session.execute(text("INSERT INTO t (v) VALUES ('d') RETURNING id"))
        assert inserted.scalar_one() == 4
        updated = await session.execute(
            text("UPDATE t SET v = v || '!' WHERE id <= 2 RETURNING id")
        )
        assert sorted(updated.scalars().all()) == [1, 2]
        changed = await session.execute(text("UPDATE t SET v = v || '?' WHERE id > 2"))
        assert changed.rowcount == 2  # type: ignore[attr-defined]
        plain = await session.execute(text("INSERT INTO t (v) VALUES ('e')"))
        assert plain.lastrowid == 5  # type: ignore[attr-defined]
    async with database.read() as session:
        values = (await session.execute(text("SELECT v FROM t ORDER BY id"))).scalars().all()
    assert values == ["a!", "b!", "c?", "d?", "e"]


async def test_executemany_writes_every_row(database: Database) -> None:
    async with database.engine.begin() as connection:
        await connection.execute(text("INSERT INTO t (v) VALUES (:v)"), [{"v": "x"}, {"v": "y"}])
    async with database.read() as session:
        count = (await session.execute(text("SELECT count(*) FROM t"))).scalar_one()
    assert count == 5


async def test_an_error_is_sqlalchemys_and_rolls_the_transaction_back(
    database: Database,
) -> None:
    with pytest.raises(IntegrityError):
        async with database.engine.begin() as connection:
            await connection.execute(text("INSERT INTO t (v) VALUES ('z')"))
            await connection.execute(text("INSERT INTO t (v) VALUES ('a')"))
    async with database.read() as session:
        values = (await session.execute(text("SELECT v FROM t"))).scalars().all()
    assert "z" not in values


async def test_many_sessions_at_once_keep_their_connections(database: Database) -> None:
    """Fifty people at once: the connections opened for them stay open for the next round
    (with SQLAlchemy's default pool of five, most were closed and opened again)."""
    opened = 0

    def count(*_: object) -> None:
        nonlocal opened
        opened += 1

    event.listen(database.engine.sync_engine, "connect", count)

    async def read_slowly() -> None:
        async with database.read() as session:
            await session.execute(text("SELECT v FROM t"))
            await asyncio.sleep(0.01)

    await asyncio.gather(*(read_slowly() for _ in range(SQLITE_POOL_SIZE)))
    first_round = opened
    await asyncio.gather(*(read_slowly() for _ in range(SQLITE_POOL_SIZE)))
    assert first_round >= SQLITE_POOL_SIZE - 1  # the fixture's connection is reused
    assert opened == first_round
