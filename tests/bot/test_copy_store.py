"""``mnemo copy-store``: a SQLite home (facts with versions, history, turns, queued writes,
settings, LanceDB vectors) onto a new PostgreSQL database, and back into a new SQLite data
folder; every table's rows and every vector arrive (issue 15, item 4). Real SQLite, LanceDB,
PostgreSQL with pgvector and the real embedding model."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import URL, select

from bot.cli import main
from memory.embedding import Embedder
from memory.index import LanceFactIndex
from memory.index.base import StoredVector
from memory.indexing import index_facts
from memory.records import Action, Actor, Fact, FactSource, FactStatus, NewFact, Role
from memory.scope import Scope
from memory.store import EventDraft, Store, StoreTransaction
from memory.store.copy import COPIED_TABLES, count_rows
from memory.store.schema import FactRow, MessageRow
from memory.store.vectors import PgVectorIndex
from tests.servers.postgres import PostgresServer

pytestmark = pytest.mark.slow

ALICE = Scope("matrix:@alice:example.org", "matrix:!dm:example.org")
BOB = Scope("discord:42", "discord:7")
WHEN = datetime(2026, 5, 1, 12, tzinfo=UTC)


def fill(transaction: StoreTransaction) -> list[Fact]:
    """Facts with versions and history, turns, a queued write and a setting; the facts to
    index."""
    old = transaction.facts.add(ALICE, NewFact("Lives in Lyon", FactSource.STATED))
    new = transaction.facts.add(ALICE, NewFact("Lives in Oslo", FactSource.STATED))
    transaction.facts.set_status(
        ALICE, old.id, FactStatus.SUPERSEDED, superseded_by=new.id, valid_to=WHEN
    )
    tea = transaction.facts.add(ALICE, NewFact("Likes green tea", FactSource.STATED))
    bob = transaction.facts.add(BOB, NewFact("Plays the cello", FactSource.STATED))
    for fact in (old, new, tea, bob):
        scope = BOB if fact is bob else ALICE
        transaction.facts.record_event(
            scope, EventDraft(Action.ADD, Actor.PIPELINE, fact_id=fact.id)
        )
    turn = transaction.turns.add(
        ALICE.room, Role.USER, "I moved to Oslo", author=ALICE.owner, created_at=WHEN
    )
    transaction.turns.add(
        ALICE.room,
        Role.ASSISTANT,
        "Nice!",
        author=None,
        created_at=WHEN,
        answer_to=turn.id,
    )
    transaction.pending.enqueue(BOB, "I also sing", message_time=WHEN, now=WHEN)
    transaction.set_setting("learning.paused.discord:42", "true")
    return [new, tea, bob]


async def fill_home(data_dir: Path, embedder: Embedder) -> None:
    store = await Store.open(data_dir / "mnemo.sqlite3")
    index = await LanceFactIndex.open(data_dir / "index", dimension=384)
    try:
        await index_facts(index, embedder, await store.write(fill))
    finally:
        await index.aclose()
        await store.aclose()


async def counts(location: Path | URL) -> dict[str, int]:
    store = await Store.open(location)
    try:
        return {name: await count_rows(store, name) for name in COPIED_TABLES}
    finally:
        await store.aclose()


def read_references(transaction: StoreTransaction) -> list[tuple[object, ...]]:
    facts = transaction.session.execute(
        select(FactRow.id, FactRow.status, FactRow.superseded_by).order_by(FactRow.id)
    )
    turns = transaction.session.execute(
        select(MessageRow.id, MessageRow.answer_to).order_by(MessageRow.id)
    )
    rows: list[tuple[object, ...]] = [tuple(row) for row in facts]
    return rows + [tuple(row) for row in turns]


async def references(location: Path | URL) -> list[tuple[object, ...]]:
    """Ids, statuses and the references between rows (newer version, answered turn)."""
    store = await Store.open(location)
    try:
        return await store.read(read_references)
    finally:
        await store.aclose()


async def lance_vectors(data_dir: Path) -> dict[int, StoredVector]:
    index = await LanceFactIndex.open(data_dir / "index", dimension=384)
    try:
        return await index.stored_vectors(list(range(1, 10)))
    finally:
        await index.aclose()


async def pg_vectors(url: URL) -> dict[int, StoredVector]:
    store = await Store.open(url)
    try:
        return await PgVectorIndex(store.database).stored_vectors(list(range(1, 10)))
    finally:
        await store.aclose()


def same_vectors(left: dict[int, StoredVector], right: dict[int, StoredVector]) -> bool:
    return left.keys() == right.keys() and all(
        left[key].model == right[key].model
        and np.allclose(left[key].vector, right[key].vector, atol=1e-6)
        for key in left
    )


def write_config(path: Path, data_dir: Path, database_url: str | None = None) -> Path:
    url = "" if database_url is None else f'database_url = "{database_url}"\n'
    path.write_text(f'[storage]\ndata_dir = "{data_dir}"\n{url}')
    return path


def test_a_sqlite_home_moves_to_postgresql_and_back_with_every_row_and_vector(
    tmp_path: Path,
    postgres: PostgresServer,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "home"
    asyncio.run(fill_home(home, embedder))
    url = asyncio.run(postgres.create_database(empty=True))
    url_text = url.render_as_string(hide_password=False)
    sqlite_config = write_config(tmp_path / "sqlite.toml", home)

    assert main(["--config", str(sqlite_config), "copy-store", "--to", url_text]) == 0
    before = asyncio.run(counts(home / "mnemo.sqlite3"))
    assert before == {
        "facts": 4,
        "fact_events": 4,
        "messages": 2,
        "pending_writes": 1,
        "store_settings": before["store_settings"],
    }
    assert before["store_settings"] >= 1
    assert asyncio.run(counts(url)) == before
    original = asyncio.run(references(home / "mnemo.sqlite3"))
    assert (1, FactStatus.SUPERSEDED.value, 2) in original and (2, 1) in original
    assert asyncio.run(references(url)) == original
    assert same_vectors(asyncio.run(pg_vectors(url)), asyncio.run(lance_vectors(home)))
    assert "vectors: 3 of 3 active facts copied" in capsys.readouterr().out

    # Into a database that already holds a memory: refused, nothing copied.
    assert main(["--config", str(sqlite_config), "copy-store", "--to", url_text]) == 1
    assert "already holds facts" in capsys.readouterr().err
    assert asyncio.run(counts(url)) == before

    back = tmp_path / "back"
    postgres_config = write_config(tmp_path / "postgres.toml", tmp_path / "models", url_text)
    assert main(["--config", str(postgres_config), "copy-store", "--to", str(back)]) == 0
    assert asyncio.run(counts(back / "mnemo.sqlite3")) == before
    assert asyncio.run(references(back / "mnemo.sqlite3")) == original
    assert same_vectors(asyncio.run(lance_vectors(back)), asyncio.run(lance_vectors(home)))
    asyncio.run(postgres.drop_database(url))
