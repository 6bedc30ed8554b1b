"""A copy of a SQLite database before its schema is upgraded, by SQLite's online backup."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path


def backup_path(database: Path, revision: str, head: str, *, now: datetime | None = None) -> Path:
    """Beside the database, named after the upgrade and the time, so none overwrites another."""
    moment = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return database.with_name(f"{database.name}.{revision}-to-{head}.{moment}.backup")


def _copy(source: Path, target: Path) -> None:
    # The online backup API copies a consistent snapshot, WAL content included, page by page.
    with closing(sqlite3.connect(source)) as origin, closing(sqlite3.connect(target)) as copy:
        origin.backup(copy)


async def backup_sqlite(source: Path, target: Path) -> None:
    await asyncio.to_thread(_copy, source, target)
