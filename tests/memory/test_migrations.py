"""Schema migrations: the first revision is the old schema, the newest is schema.py, data stays.

The fixture ``store_fixtures/mnemo-3844196.sqlite3`` was made by the code of commit 3844196
(``create_all``, no Alembic); ``store_fixtures/make_3844196.py`` says how. A new revision is
checked by these tests as they are: the newest revision must make what schema.py declares,
and every row of the old database must still be there (on the columns it had).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import URL, Connection, Table, inspect
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from memory.errors import SchemaError, SchemaOutdatedError, SchemaTooNewError, StoreError
from memory.records import ConversationTurn, Fact, FactEvent, FactStatus, PendingWrite, Role
from memory.scope import Scope
from memory.store import Store, StoreTransaction, database_url, sqlite_url
from memory.store.migrations import (
    BASELINE,
    head_revision,
    inspect_schema,
    runner,
    upgrade_schema,
    upgrade_sql,
)
from memory.store.schema import Base, FactVectorRow
from tests.servers.postgres import PostgresServer

FIXTURES = Path(__file__).parent / "store_fixtures"
OLD_DATABASE = FIXTURES / "mnemo-3844196.sqlite3"
ALICE_ROOM = Scope("matrix:@alice:example.org", "matrix:!room1:example.org")
ALICE_DM = Scope("matrix:@alice:example.org", "matrix:dm")
BOB_ROOM = Scope("discord:81234567890", "discord:4455")


@pytest.fixture
def old_database(tmp_path: Path) -> Path:
    """A copy of the database made by commit 3844196 (the committed file is never changed)."""
    path = tmp_path / "data" / "mnemo.sqlite3"
    path.parent.mkdir()
    shutil.copyfile(OLD_DATABASE, path)
    return path


def table_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row of every Mnemo table, in primary-key order, read with plain sqlite3."""
    with closing(sqlite3.connect(path)) as connection:
        connection.row_factory = sqlite3.Row
        tables = [
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'alembic_version'"
            )
        ]
        return {
            table: [dict(row) for row in connection.execute(f'SELECT * FROM "{table}" ORDER BY 1')]
            for table in tables
        }


def only_columns(
    rows: dict[str, list[dict[str, Any]]], like: dict[str, list[dict[str, Any]]]
) -> dict[str, list[dict[str, Any]]]:
    """``rows`` cut to the tables and columns that ``like`` has (new columns are the upgrade's)."""
    return {
        table: [{key: row[key] for key in old[0]} for row in rows[table]] if old else rows[table]
        for table, old in like.items()
    }


def content_of(path: Path) -> bytes:
    return path.read_bytes()


def sqlite_schema_sql(path: Path) -> list[tuple[str, str, str | None]]:
    with closing(sqlite3.connect(path)) as connection:
        return list(
            connection.execute(
                "SELECT type, name, sql FROM sqlite_master "
                "WHERE tbl_name != 'alembic_version' ORDER BY name"
            )
        )


def stored_revision(path: Path) -> str | None:
    """The revision recorded in the file; None if it has no alembic_version table."""
    with closing(sqlite3.connect(path)) as connection:
        query = "SELECT name FROM sqlite_master WHERE name = 'alembic_version'"
        if connection.execute(query).fetchone() is None:
            return None
        row = connection.execute("SELECT version_num FROM alembic_version").fetchone()
    return None if row is None else str(row[0])


def schema_snapshot(connection: Connection) -> dict[str, Any]:
    """Tables, column types, keys, foreign keys with ON DELETE, and indexes, as reflected."""
    inspector = inspect(connection)
    snapshot: dict[str, Any] = {}
    for table in sorted(set(inspector.get_table_names()) - {"alembic_version"}):
        snapshot[table] = {
            "columns": [
                (column["name"], str(column["type"]), column["nullable"], column.get("default"))
                for column in inspector.get_columns(table)
            ],
            "primary key": inspector.get_pk_constraint(table)["constrained_columns"],
            "foreign keys": sorted(
                (
                    tuple(key["constrained_columns"]),
                    key["referred_table"],
                    tuple(key["referred_columns"]),
                    key["options"].get("ondelete"),
                )
                for key in inspector.get_foreign_keys(table)
            ),
            "indexes": sorted(
                (str(index["name"]), tuple(map(str, index["column_names"])), index["unique"])
                for index in inspector.get_indexes(table)
            ),
        }
    return snapshot


async def upgrade_to(path: Path, revision: str) -> None:
    """Only the revisions up to ``revision``, as an old Mnemo would have left the database."""
    engine = runner.migration_engine(sqlite_url(path))

    def upgrade(connection: Connection) -> None:
        command.upgrade(runner.alembic_config(connection=connection), revision)

    async with engine.begin() as connection:
        await connection.run_sync(upgrade)
    await engine.dispose()


async def reflect(location: Path | URL) -> dict[str, Any]:
    engine = create_async_engine(database_url(location), poolclass=NullPool)
    async with engine.connect() as connection:
        snapshot = await connection.run_sync(schema_snapshot)
    await engine.dispose()
    return snapshot


def declared_tables(dialect: str) -> list[Table]:
    """The tables schema.py declares for a dialect (SQLite has no pgvector table)."""
    return [
        table
        for table in Base.metadata.sorted_tables
        if dialect == "postgresql" or table.name != FactVectorRow.__tablename__
    ]


async def empty_database(backend: str, tmp_path: Path, name: str, postgres: Any) -> Path | URL:
    if backend == "sqlite":
        return tmp_path / f"{name}.sqlite3"
    url: URL = await postgres.create_database(empty=True)
    return url


def only_tables(names: set[str]) -> Callable[[Any, str | None, str, bool, Any], bool]:
    def include(item: Any, name: str | None, kind: str, reflected: bool, other: Any) -> bool:
        return kind != "table" or name in names

    return include


@pytest.fixture
def postgres_if_needed(backend: str, request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("postgres") if backend == "postgresql" else None


async def test_first_revision_is_exactly_the_schema_of_3844196(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    await upgrade_to(path, BASELINE)
    assert sqlite_schema_sql(path) == sqlite_schema_sql(OLD_DATABASE)
    assert len(sqlite_schema_sql(path)) == 11  # 5 tables, 5 indexes, the settings key's index


async def test_newest_revision_makes_what_schema_py_declares(
    backend: str, tmp_path: Path, postgres_if_needed: Any
) -> None:
    migrated = await empty_database(backend, tmp_path, "migrated", postgres_if_needed)
    declared = await empty_database(backend, tmp_path, "declared", postgres_if_needed)
    await (await Store.open(migrated)).aclose()
    tables = declared_tables(backend)
    engine = create_async_engine(database_url(declared), poolclass=NullPool)
    async with engine.begin() as connection:
        if backend == "postgresql":
            await connection.exec_driver_sql("CREATE EXTENSION vector")
        await connection.run_sync(lambda sync: Base.metadata.create_all(sync, tables=tables))
    await engine.dispose()

    names = {table.name for table in tables}
    engine = create_async_engine(database_url(migrated), poolclass=NullPool)
    async with engine.connect() as connection:
        differences = await connection.run_sync(
            lambda sync: compare_metadata(
                MigrationContext.configure(
                    sync,
                    opts={"include_object": only_tables(names)},
                ),
                Base.metadata,
            )
        )
        revision = await connection.run_sync(
            lambda sync: MigrationContext.configure(sync).get_current_revision()
        )
    await engine.dispose()
    assert differences == [], "schema.py and the newest revision differ; write a revision"
    assert await reflect(migrated) == await reflect(declared)
    assert revision == head_revision()


async def test_database_of_3844196_keeps_every_row(old_database: Path) -> None:
    before = table_rows(old_database)
    assert {table: len(rows) for table, rows in before.items()} == {
        "facts": 8,
        "fact_events": 5,
        "messages": 4,
        "pending_writes": 2,
        "store_settings": 2,
    }
    store = await Store.open(old_database)
    try:
        await read_through_the_store(store)
    finally:
        await store.aclose()
    assert only_columns(table_rows(old_database), before) == before
    assert stored_revision(old_database) == head_revision()


@dataclass(frozen=True, slots=True)
class ReadBack:
    """What the old database holds, read through today's store."""

    room_facts: list[Fact]
    dm_facts: list[Fact]
    berlin: Fact
    history: list[FactEvent]
    turns: list[ConversationTurn]
    queued: list[PendingWrite]
    setting: str | None
    bob: list[Fact]


def read_back(transaction: StoreTransaction) -> ReadBack:
    everything = tuple(FactStatus)
    room_facts = transaction.facts.list_in_scope(ALICE_ROOM, statuses=everything)
    berlin = next(fact for fact in room_facts if fact.text == "I live in Berlin now")
    return ReadBack(
        room_facts=room_facts,
        dm_facts=transaction.facts.list_in_scope(ALICE_DM, statuses=everything),
        berlin=berlin,
        history=transaction.facts.events_for_fact(ALICE_ROOM, berlin.id),
        turns=transaction.turns.recent(ALICE_ROOM.room, limit=10),
        queued=transaction.pending.due(datetime.max.replace(tzinfo=UTC)),
        setting=transaction.get_setting("consolidation.last_run"),
        bob=transaction.facts.list_in_scope(BOB_ROOM),
    )


async def read_through_the_store(store: Store) -> None:
    """The upgraded database works with today's code: versions, events, turns, queue, settings."""
    read = await store.read(read_back)
    assert [(fact.text, fact.status) for fact in read.room_facts] == [
        ("I live in Paris", FactStatus.SUPERSEDED),
        ("I live in Berlin now", FactStatus.ACTIVE),
        ("I play chess on Sundays", FactStatus.DELETED),
    ]
    assert read.room_facts[0].superseded_by == read.berlin.id
    assert read.room_facts[0].valid_from == datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    assert [fact.status for fact in read.dm_facts] == [
        FactStatus.ACTIVE,
        FactStatus.MERGED,
        FactStatus.ACTIVE,
    ]
    assert read.dm_facts[2].text == "私の猫の名前はミケです 🐈"
    assert [(event.old_text, event.new_text) for event in read.history] == [
        ("I live in Paris", "I live in Berlin now")
    ]
    assert [(turn.role, turn.text) for turn in read.turns] == [
        (Role.USER, "I moved to Berlin"),
        (Role.ASSISTANT, "Congratulations on the move!"),
    ]
    assert [(write.text, write.attempts, write.last_error) for write in read.queued] == [
        ("I have two sisters", 1, "LLM unreachable: connection refused"),
        ("I got a dog", 0, None),
    ]
    assert read.setting == "2025-03-01T09:30:00+00:00"
    assert len(read.bob) == 2


async def test_database_before_migrations_is_recognised_not_recreated(
    old_database: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = await inspect_schema(sqlite_url(old_database))
    assert (state.revision, state.legacy, state.is_current) == (BASELINE, True, False)
    caplog.set_level(logging.INFO, logger="memory.store.migrations")
    await (await Store.open(old_database)).aclose()
    assert f"made before migrations: recognised as revision {BASELINE}" in caplog.text
    # Recognised, so a later start finds it current and does nothing more.
    caplog.clear()
    assert (await inspect_schema(sqlite_url(old_database))).is_current
    await (await Store.open(old_database)).aclose()
    assert "revision" not in caplog.text


@pytest.fixture
def extra_revisions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the migrations to add test revisions to; the runner is pointed at it."""
    directory = tmp_path / "migrations"
    shutil.copytree(
        runner.MIGRATIONS_DIRECTORY, directory, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(runner, "MIGRATIONS_DIRECTORY", directory)
    yield directory / "versions"


def add_revision(versions: Path, revision: str, body: str) -> None:
    down = head_revision()
    (versions / f"{revision}_test.py").write_text(
        "import sqlalchemy as sa\nfrom alembic import op\n\n"
        f"revision = {revision!r}\ndown_revision = {down!r}\n\n\ndef upgrade() -> None:\n" + body,
        encoding="utf-8",
    )


# The most dangerous shape of revision on SQLite: the facts table is rebuilt (copied, the old
# one dropped), while fact_events and facts itself point at it with ON DELETE SET NULL.
REBUILD_FACTS = """    with op.batch_alter_table("facts", recreate="always") as batch:
        batch.add_column(sa.Column("test_note", sa.String(), nullable=True))
"""


async def test_upgrade_backs_up_first_and_keeps_the_links_between_rows(
    old_database: Path, extra_revisions: Path, caplog: pytest.LogCaptureFixture
) -> None:
    add_revision(extra_revisions, "9001", REBUILD_FACTS)
    before = table_rows(old_database)
    caplog.set_level(logging.INFO, logger="memory.store.migrations")
    store = await Store.open(old_database)
    await store.aclose()

    after = table_rows(old_database)
    assert only_columns(after, before) == before  # superseded_by and fact_id links included
    assert {row["test_note"] for row in after["facts"]} == {None}
    assert stored_revision(old_database) == "9001"
    backups = list(old_database.parent.glob("mnemo.sqlite3.*.backup"))
    assert [backup.name.split(".")[2] for backup in backups] == [f"{BASELINE}-to-9001"]
    assert str(backups[0]) in caplog.text
    assert table_rows(backups[0]) == before
    assert sqlite_schema_sql(backups[0]) == sqlite_schema_sql(OLD_DATABASE)


async def test_a_failed_upgrade_changes_nothing(old_database: Path, extra_revisions: Path) -> None:
    await (await Store.open(old_database)).aclose()
    head = head_revision()
    add_revision(
        extra_revisions,
        "9001",
        '    op.add_column("facts", sa.Column("test_note", sa.String()))\n'
        "    op.execute(\"UPDATE facts SET text = 'overwritten'\")\n"
        '    raise RuntimeError("a revision that breaks half-way")\n',
    )
    before = table_rows(old_database)
    with pytest.raises(StoreError, match=r"failed and changed nothing.*breaks half-way"):
        await Store.open(old_database)
    assert table_rows(old_database) == before
    assert stored_revision(old_database) == head


async def test_a_database_newer_than_the_code_is_refused_untouched(old_database: Path) -> None:
    await (await Store.open(old_database)).aclose()
    with closing(sqlite3.connect(old_database)) as connection, connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    content = content_of(old_database)
    files = sorted(old_database.parent.iterdir())
    for migrate in (True, False):
        with pytest.raises(SchemaTooNewError) as refused:
            await Store.open(old_database, migrate=migrate)
        message = str(refused.value)
        assert "\n" not in message
        assert "schema revision 9999, newer than this Mnemo" in message
    assert content_of(old_database) == content
    assert sorted(old_database.parent.iterdir()) == files  # no new backup, no journal left


async def test_an_outdated_database_is_not_upgraded_when_not_asked(old_database: Path) -> None:
    content = content_of(old_database)
    with pytest.raises(SchemaOutdatedError, match="run `mnemo migrate`"):
        await Store.open(old_database, migrate=False)
    assert content_of(old_database) == content


async def test_a_database_with_only_some_of_the_tables_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("CREATE TABLE facts (id INTEGER PRIMARY KEY)")
    with pytest.raises(SchemaError, match=r"not all \(missing: fact_events, messages"):
        await Store.open(path)


async def downgrade_to(path: Path, revision: str) -> None:
    engine = runner.migration_engine(sqlite_url(path))

    def downgrade(connection: Connection) -> None:
        command.downgrade(runner.alembic_config(connection=connection), revision)

    async with engine.begin() as connection:
        await connection.run_sync(downgrade)
    await engine.dispose()


# Turns as the code of 3844196 kept them: the person's, then the bot's answer with the
# person as author, in the shared DM room.
TURNS_3844196 = [
    ("matrix:dm", "matrix:alice", "user", "I have a cat", "$1"),
    ("matrix:dm", "matrix:alice", "assistant", "Lovely!", None),
    ("matrix:dm", "matrix:bob", "user", "hello", "$2"),
    ("matrix:dm", "matrix:bob", "assistant", "Hi Bob!", None),
    ("matrix:dm", "matrix:alice", "user", "I have a dog too", "$3"),
    ("matrix:dm", "matrix:alice", "assistant", "Two pets!", None),
    ("matrix:!r:x", "matrix:alice", "assistant", "an answer with no question kept", None),
]


async def test_revision_0003_links_earlier_answers_and_downgrades_to_0002(tmp_path: Path) -> None:
    path = tmp_path / "mnemo.sqlite3"
    await upgrade_to(path, BASELINE)
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.executemany(
            "INSERT INTO messages (room, author, role, text, created_at, platform_message_id) "
            "VALUES (?, ?, ?, ?, '2026-01-01 00:00:00', ?)",
            TURNS_3844196,
        )
    before = table_rows(path)
    await upgrade_to(path, "0003")
    linked = [(row["id"], row["answer_to"]) for row in table_rows(path)["messages"]]
    assert linked == [(1, None), (2, 1), (3, None), (4, 3), (5, None), (6, 5), (7, None)]
    with closing(sqlite3.connect(path)) as connection, connection:
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("DELETE FROM messages WHERE id = 5")  # the answer goes with it
        remaining = connection.execute("SELECT id FROM messages ORDER BY id").fetchall()
        assert [row[0] for row in remaining] == [1, 2, 3, 4, 7]

    await downgrade_to(path, "0002")
    fresh = tmp_path / "fresh.sqlite3"
    await upgrade_to(fresh, "0002")
    assert await reflect(path) == await reflect(fresh)
    kept = {"messages": [row for row in before["messages"] if row["id"] not in (5, 6)]}
    assert only_columns(table_rows(path), kept) == kept
    assert stored_revision(path) == "0002"


async def revision_in(url: URL) -> str | None:
    return (await inspect_schema(url)).revision


async def test_postgres_processes_starting_together_upgrade_once(
    postgres: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = await postgres.create_database(empty=True)
    caplog.set_level(logging.INFO, logger="memory.store.migrations")
    outcomes = await asyncio.gather(*(upgrade_schema(url) for _ in range(3)))
    assert await revision_in(url) == head_revision()
    # The advisory lock lets one create the tables; the others wait and find them there.
    assert caplog.text.count("created at schema revision") == 1
    assert all(outcome.after == head_revision() for outcome in outcomes)


async def test_a_failed_postgres_upgrade_changes_nothing(
    postgres: PostgresServer, extra_revisions: Path
) -> None:
    url = await postgres.create_database(empty=True)
    await upgrade_schema(url)
    previous = head_revision()
    add_revision(
        extra_revisions,
        "9001",
        '    op.add_column("facts", sa.Column("test_note", sa.String()))\n'
        '    raise RuntimeError("a revision that breaks half-way")\n',
    )
    with pytest.raises(StoreError, match=r"failed and changed nothing.*breaks half-way"):
        await Store.open(url)
    assert await revision_in(url) == previous
    assert "test_note" not in str(await reflect(url))


async def test_a_newer_postgres_database_is_refused(postgres: PostgresServer) -> None:
    url = await postgres.create_database(empty=True)
    await upgrade_schema(url)
    engine = create_async_engine(url, poolclass=NullPool)
    async with engine.begin() as connection:
        await connection.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    await engine.dispose()
    with pytest.raises(SchemaTooNewError, match="schema revision 9999, newer than this Mnemo"):
        await Store.open(url)
    assert await revision_in(url) == "9999"


async def test_postgres_sql_creates_pgvector_and_the_vector_table(postgres: PostgresServer) -> None:
    url = await postgres.create_database(empty=True)
    script = await upgrade_sql(url)
    assert "CREATE EXTENSION IF NOT EXISTS vector" in script
    assert "CREATE TABLE fact_vectors" in script
    assert "embedding VECTOR NOT NULL" in script
    assert "ON DELETE CASCADE" in script
    assert await revision_in(url) is None  # only printed


async def test_a_role_that_may_not_create_pgvector_is_told_what_to_run(
    postgres: PostgresServer,
) -> None:
    await postgres.admin("DROP ROLE IF EXISTS mnemo_owner")
    await postgres.admin("CREATE ROLE mnemo_owner LOGIN")
    url = await postgres.create_database(empty=True, owner="mnemo_owner")
    as_owner = url.set(username="mnemo_owner")
    with pytest.raises(StoreError, match=r'as a superuser in the database "mnemo_test_\d+"'):
        await Store.open(as_owner)
    assert await revision_in(url) is None
    await postgres.admin("CREATE EXTENSION vector SCHEMA public", database=url.database)
    await (await Store.open(as_owner)).aclose()
    assert await revision_in(url) == head_revision()
