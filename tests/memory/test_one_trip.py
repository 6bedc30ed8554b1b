"""The reply path's short writes (intake, answer): run whole in one call on SQLite's writer
thread, those waiting at once together in one transaction, a failing one alone (issue 16).

Real SQLite files; the store's write lock is held by the test to make the writes wait.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Connection, event, func, select

from memory.errors import StoreError
from memory.scope import Scope
from memory.store import Accepted, Intake, Store
from memory.store.one_trip import ThreadWriter
from memory.store.schema import MESSAGES, PENDING_WRITES

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def intake(person: int) -> Intake:
    scope = Scope(owner=f"console:p{person}", room="console:dm")
    return Intake(scope, f"I am person {person}", message_time=NOW, queued_at=NOW)


@contextmanager
def counted_commits(store: Store) -> Iterator[list[object]]:
    writer = store.database.one_trip
    assert isinstance(writer, ThreadWriter)
    commits: list[object] = []

    def committed(*_: Any) -> None:
        commits.append(object())

    event.listen(writer.engine, "commit", committed)
    try:
        yield commits
    finally:
        event.remove(writer.engine, "commit", committed)


async def count(store: Store, table: Any) -> int:
    async with store.read() as transaction:
        query = select(func.count()).select_from(table)
        return int((await transaction.session.execute(query)).scalar_one())


async def test_intakes_waiting_at_once_go_together_in_one_commit(sqlite_store: Store) -> None:
    with counted_commits(sqlite_store) as commits:
        async with sqlite_store.database.write_lock.hold():
            takes = [asyncio.create_task(sqlite_store.take_in(intake(n))) for n in range(10)]
            await asyncio.sleep(0)  # every intake waits for the lock now
        accepted: list[Accepted] = await asyncio.gather(*takes)
    assert len(commits) == 1
    assert len({item.turn_id for item in accepted}) == 10
    assert len({item.pending_id for item in accepted}) == 10
    assert await count(sqlite_store, MESSAGES) == 10
    assert await count(sqlite_store, PENDING_WRITES) == 10


async def test_a_failing_write_fails_alone_and_the_others_are_kept(sqlite_store: Store) -> None:
    def broken(connection: Connection) -> None:
        connection.exec_driver_sql("INSERT INTO no_such_table VALUES (1)")

    async with sqlite_store.database.write_lock.hold():
        takes = [asyncio.create_task(sqlite_store.take_in(intake(n))) for n in range(3)]
        failing = asyncio.create_task(sqlite_store.database.write_at_once(broken))
        await asyncio.sleep(0)
    accepted = await asyncio.gather(*takes)
    with pytest.raises(StoreError, match="no_such_table"):
        await failing
    assert [item.pending_id is not None for item in accepted] == [True] * 3
    assert await count(sqlite_store, MESSAGES) == 3


async def test_a_write_whose_caller_left_before_its_turn_is_not_made(sqlite_store: Store) -> None:
    async with sqlite_store.database.write_lock.hold():
        staying = asyncio.create_task(sqlite_store.take_in(intake(1)))
        leaving = asyncio.create_task(sqlite_store.take_in(intake(2)))
        await asyncio.sleep(0)
        leaving.cancel()
    await staying
    with pytest.raises(asyncio.CancelledError):
        await leaving
    async with sqlite_store.read() as transaction:
        texts = (await transaction.session.execute(select(MESSAGES.c.text))).scalars().all()
    assert texts == ["I am person 1"]
