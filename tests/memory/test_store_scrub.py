"""Scrubbing SQLite after a forget: the words are in no byte of the database, log or index file."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from memory.errors import StoreError
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction, database
from tests.memory.raw_bytes import files_containing

ALICE = Scope("console:alice", "console:room1")
SECRET = "zqxjpassvv"


def _secret_among_others(transaction: StoreTransaction) -> int:
    for n in range(200):
        transaction.facts.add(ALICE, NewFact(f"I own {n} plain stones"))
    secret = transaction.facts.add(ALICE, NewFact(f"My passphrase is {SECRET}"))
    for n in range(200):
        transaction.facts.add(ALICE, NewFact(f"I saw {n} plain birds"))
    return secret.id


async def _remember_among_others(store: Store) -> int:
    return await store.write(_secret_among_others)


@pytest.fixture
def store(sqlite_store: Store) -> Store:
    """These tests read SQLite's own files: SQLite only."""
    return sqlite_store


async def _forget(store: Store, fact_id: int) -> None:
    erased = await store.write(lambda transaction: transaction.forget.fact(ALICE, fact_id))
    assert erased is not None and erased.fact_ids == (fact_id,)


async def test_secure_delete_is_on(store: Store) -> None:
    value = await store.read(
        lambda transaction: transaction.session.execute(text("PRAGMA secure_delete")).scalar_one()
    )
    assert value == 1


async def test_forgotten_words_are_in_no_byte_of_the_database_files(
    store: Store, tmp_path: Path
) -> None:
    secret_id = await _remember_among_others(store)
    # The page holding the fact also holds others: it stays in use after the delete.
    await store.scrub()
    assert files_containing(tmp_path, SECRET) == ["mnemo.sqlite3"]

    await _forget(store, secret_id)
    assert files_containing(tmp_path, SECRET) != [], "the log still holds the old page"
    await store.scrub()

    assert files_containing(tmp_path, SECRET) == []
    assert (tmp_path / "mnemo.sqlite3-wal").stat().st_size == 0
    plain = await store.read(
        lambda transaction: transaction.facts.matching(ALICE, "plain", limit=1000)
    )
    assert len(plain) == 400


def _hold_a_read_snapshot(path: Path, opened: threading.Event, release: threading.Event) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("BEGIN")
        connection.execute("SELECT count(*) FROM facts").fetchone()
        opened.set()
        release.wait(timeout=30)
        connection.execute("COMMIT")
    finally:
        connection.close()


async def test_scrub_waits_for_a_reader_to_finish(store: Store, tmp_path: Path) -> None:
    secret_id = await _remember_among_others(store)
    opened, release = threading.Event(), threading.Event()
    reader = threading.Thread(
        target=_hold_a_read_snapshot, args=(tmp_path / "mnemo.sqlite3", opened, release)
    )
    reader.start()
    await asyncio.to_thread(opened.wait, 10)
    await _forget(store, secret_id)
    asyncio.get_running_loop().call_later(0.3, release.set)

    await store.scrub()

    await asyncio.to_thread(reader.join, 10)
    assert files_containing(tmp_path, SECRET) == []


async def test_scrub_says_so_when_a_reader_never_lets_go(store: Store, tmp_path: Path) -> None:
    secret_id = await _remember_among_others(store)
    opened, release = threading.Event(), threading.Event()
    reader = threading.Thread(
        target=_hold_a_read_snapshot, args=(tmp_path / "mnemo.sqlite3", opened, release)
    )
    reader.start()
    await asyncio.to_thread(opened.wait, 10)
    try:
        await _forget(store, secret_id)
        store.database.log_wait_seconds = 0.3
        with pytest.raises(StoreError, match="could not be emptied"):
            await store.scrub()
    finally:
        release.set()
        await asyncio.to_thread(reader.join, 10)
    await store.scrub()
    assert files_containing(tmp_path, SECRET) == []


async def test_twenty_forgets_at_once_leave_none_of_their_words_in_the_files(
    store: Store, tmp_path: Path
) -> None:
    secrets = [f"zqxjpass{number:02d}vv" for number in range(20)]
    ids = await store.write(
        lambda transaction: [
            transaction.facts.add(ALICE, NewFact(f"My code is {s}")).id for s in secrets
        ]
    )
    await store.scrub()

    await asyncio.gather(*(_forget_and_scrub(store, fact_id) for fact_id in ids))

    assert [s for s in secrets if files_containing(tmp_path, s)] == []


async def _forget_and_scrub(store: Store, fact_id: int) -> None:
    await _forget(store, fact_id)
    await store.scrub()


async def test_a_writer_waits_for_one_truncation_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Back-to-back truncations, each held up by a reader, must not keep a writer out past
    busy_timeout ("database is locked"): it takes its turn before the next truncation."""
    # Each truncation waits 1 s for the reader; SQLite's busy handler gives up at 1.2 s.
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MILLISECONDS", 1200)
    store = await Store.open(tmp_path / "mnemo.sqlite3")
    store.database.log_wait_seconds = 1.0
    opened, release = threading.Event(), threading.Event()
    reader = threading.Thread(
        target=_hold_a_read_snapshot, args=(tmp_path / "mnemo.sqlite3", opened, release)
    )
    try:
        secret_id = await _remember_among_others(store)
        reader.start()
        await asyncio.to_thread(opened.wait, 10)
        await _forget(store, secret_id)
        first = asyncio.create_task(store.scrub())
        await asyncio.sleep(0.2)
        second = asyncio.create_task(store.scrub())  # the truncation after the first
        await asyncio.sleep(0.2)
        await store.write(
            lambda transaction: transaction.facts.add(ALICE, NewFact("I saw a heron"))
        )
        for truncation in (first, second):
            with pytest.raises(StoreError, match="could not be emptied"):
                await truncation
    finally:
        release.set()
        await asyncio.to_thread(reader.join, 10)
        await store.aclose()
