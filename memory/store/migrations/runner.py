"""Drives Alembic from code: read the schema revision, upgrade it, print the SQL.

Every upgrade runs in ONE transaction (we emit BEGIN on SQLite, whose driver would
autocommit each DDL statement), so a failed upgrade leaves the old revision.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, event, inspect
from sqlalchemy.engine import URL
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from memory.errors import SchemaError, SchemaOutdatedError, SchemaTooNewError, StoreError
from memory.store.database import translate_error
from memory.store.migrations.backup import backup_path, backup_sqlite

log = logging.getLogger(__name__)

MIGRATIONS_DIRECTORY = Path(__file__).resolve().parent
# The schema every database made before migrations has (it never changed before them).
BASELINE = "0001"
BASELINE_TABLES = frozenset(
    {"facts", "fact_events", "messages", "pending_writes", "store_settings"}
)
# Any constant works; it only has to be the same in every Mnemo process on one PostgreSQL.
POSTGRES_MIGRATION_LOCK = 7_215_310_015


@dataclass(frozen=True, slots=True)
class SchemaState:
    """Where a database stands: its revision and the one this code needs."""

    revision: str | None  # None: no Mnemo tables yet
    head: str
    known: bool  # this code has the revision (False: made by a newer Mnemo)
    legacy: bool = False  # made before migrations: tables, but no alembic_version

    @property
    def is_current(self) -> bool:
        return self.revision == self.head and not self.legacy

    @property
    def is_empty(self) -> bool:
        return self.revision is None


@dataclass(frozen=True, slots=True)
class UpgradeOutcome:
    before: SchemaState
    after: str
    backup: Path | None

    @property
    def changed(self) -> bool:
        return not self.before.is_current


def alembic_config(
    *, connection: Connection | None = None, dialect_name: str | None = None
) -> AlembicConfig:
    config = AlembicConfig(output_buffer=io.StringIO())
    config.set_main_option("script_location", str(MIGRATIONS_DIRECTORY))
    config.attributes["connection"] = connection
    config.attributes["dialect_name"] = dialect_name
    return config


def script_directory() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    head = script_directory().get_current_head()
    assert head is not None, "the migrations package has no revision"
    return head


def known_revisions() -> set[str]:
    return {script.revision for script in script_directory().walk_revisions()}


def describe(url: URL) -> str:
    """The database for a person to read: the file, or the URL without its password."""
    if url.get_backend_name() == "sqlite":
        return str(url.database)
    return url.render_as_string(hide_password=True)


def sqlite_file(url: URL) -> Path | None:
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    database = str(url.database)
    if url.query.get("uri") == "true" and database.startswith("file:"):
        # SQLite's own URI (the doctor's read-only open): the path is quoted after "file:".
        return Path(unquote(database.removeprefix("file:")))
    return Path(database)


def read_state(connection: Connection) -> SchemaState:
    head = head_revision()
    revision = MigrationContext.configure(connection).get_current_revision()
    if revision is not None:
        return SchemaState(revision, head, known=revision in known_revisions())
    tables = set(inspect(connection).get_table_names())
    present = BASELINE_TABLES & tables
    if not present:
        return SchemaState(None, head, known=True)
    if present != BASELINE_TABLES:
        missing = ", ".join(sorted(BASELINE_TABLES - present))
        raise SchemaError(
            f"the database has some of Mnemo's tables but not all (missing: {missing}) and no "
            "schema revision: it was not made by Mnemo; point storage at an empty database or "
            "restore a backup"
        )
    return SchemaState(BASELINE, head, known=True, legacy=True)


def refuse_newer(state: SchemaState, where: str) -> None:
    if not state.known:
        raise SchemaTooNewError(
            f"the database {where} has schema revision {state.revision}, newer than this Mnemo "
            f"(which knows up to {state.head}): run the newer Mnemo that upgraded it, or restore "
            "the backup made before that upgrade"
        )


def migration_engine(url: URL) -> AsyncEngine:
    """An engine for one upgrade: one connection, and on SQLite a real transaction for DDL."""
    engine = create_async_engine(url, poolclass=NullPool)
    if url.get_backend_name() == "sqlite":
        event.listen(engine.sync_engine, "connect", _sqlite_migration_connection)
        event.listen(engine.sync_engine, "begin", _sqlite_begin)
    return engine


def _sqlite_migration_connection(dbapi_connection: Any, connection_record: Any) -> None:
    # The driver must not BEGIN or COMMIT on its own: _sqlite_begin opens the one transaction.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # Rebuilding a table (Alembic's batch mode) drops the old one; with foreign keys on, that
    # would null or cascade the rows pointing at it. Checked before commit instead.
    cursor.execute("PRAGMA foreign_keys=OFF")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    connection.exec_driver_sql("BEGIN IMMEDIATE")


def check_foreign_keys(connection: Connection) -> None:
    if connection.dialect.name != "sqlite":
        return
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        raise SchemaError(
            f"the upgrade would leave {len(broken)} rows pointing at rows that do not exist "
            f"(first: {tuple(broken[0])}); nothing was changed"
        )


def upgrade_in(connection: Connection, where: str) -> SchemaState:
    """Bring the database to head inside the caller's transaction; returns where it stood."""
    if connection.dialect.name == "postgresql":
        # Several processes may start at once; the second waits, then finds nothing to do.
        connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({POSTGRES_MIGRATION_LOCK})")
    state = read_state(connection)
    refuse_newer(state, where)
    config = alembic_config(connection=connection)
    if state.legacy:
        command.stamp(config, BASELINE)
        log.info("database %s made before migrations: recognised as revision %s", where, BASELINE)
    if state.revision != state.head:
        command.upgrade(config, "head")
    check_foreign_keys(connection)
    return state


async def inspect_schema(url: URL, engine: AsyncEngine | None = None) -> SchemaState:
    """Where the database stands, changing nothing (a missing SQLite file is empty); on
    ``engine``'s pooled connection if given."""
    path = sqlite_file(url)
    if path is not None and not path.exists():
        return SchemaState(None, head_revision(), known=True)
    reader = create_async_engine(url, poolclass=NullPool) if engine is None else engine
    try:
        async with reader.connect() as connection:
            return await connection.run_sync(read_state)
    except SQLAlchemyError as error:
        raise translate_error(error) from error
    finally:
        if engine is None:
            await reader.dispose()


async def require_current_schema(url: URL, engine: AsyncEngine | None = None) -> SchemaState:
    """For read-only use (the doctor): the schema must be current, nothing is upgraded."""
    state = await inspect_schema(url, engine)
    refuse_newer(state, describe(url))
    if not state.is_current:
        raise SchemaOutdatedError(
            f"the database {describe(url)} is at schema revision {state.revision or '(none)'}, "
            f"this Mnemo needs {state.head}: run `mnemo migrate` (the bot also upgrades it at "
            "start-up, after a backup)"
        )
    return state


async def upgrade_schema(url: URL, engine: AsyncEngine | None = None) -> UpgradeOutcome:
    """Upgrade to head, on a connection of its own; on SQLite with data, a backup first."""
    where = describe(url)
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    state = await inspect_schema(url, engine)
    refuse_newer(state, where)
    if state.is_current:
        return UpgradeOutcome(state, state.head, backup=None)
    backup = await _backup_before(url, state)
    engine = migration_engine(url)
    try:
        async with engine.begin() as connection:
            before = await connection.run_sync(upgrade_in, where)
    except SchemaError:
        raise
    except Exception as error:  # a revision may raise anything; the transaction rolled back
        raise StoreError(
            f"the upgrade of the database {where} from schema revision {state.revision} to "
            f"{state.head} failed and changed nothing ({type(error).__name__}: {error})"
        ) from error
    finally:
        await engine.dispose()
    _log_upgrade(where, before, backup)
    return UpgradeOutcome(before, before.head, backup)


async def _backup_before(url: URL, state: SchemaState) -> Path | None:
    path = sqlite_file(url)
    if path is None or state.is_empty or state.revision == state.head:
        return None  # nothing to lose: a new database, or only the revision gets recorded
    target = backup_path(path, str(state.revision), state.head)
    await backup_sqlite(path, target)
    return target


def _log_upgrade(where: str, before: SchemaState, backup: Path | None) -> None:
    if before.is_empty:
        log.info("database %s created at schema revision %s", where, before.head)
    elif before.revision != before.head:
        log.warning(
            "database %s upgraded from schema revision %s to %s; the copy from before is %s",
            where,
            before.revision,
            before.head,
            backup if backup is not None else "not needed (PostgreSQL: use your own backups)",
        )


async def upgrade_sql(url: URL) -> str:
    """The SQL an upgrade of this database would run, from its revision to head."""
    state = await inspect_schema(url)
    refuse_newer(state, describe(url))
    config = alembic_config(dialect_name=url.get_backend_name())
    if state.legacy:
        command.stamp(config, BASELINE, sql=True)
    if state.revision != state.head:
        start = "base" if state.revision is None else state.revision
        command.upgrade(config, f"{start}:head", sql=True)
    buffer = config.output_buffer
    assert isinstance(buffer, io.StringIO)
    return buffer.getvalue()
