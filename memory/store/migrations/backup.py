"""A copy of a SQLite database before its schema is upgraded, and how long such copies live.

A copy holds forgotten facts too, so a forget deletes every copy and the storage job those
older than the retention.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

log = logging.getLogger(__name__)

_STAMP = re.compile(r"\.(\d{8}T\d{6}Z)\.backup$")
_STAMP_FORMAT = "%Y%m%dT%H%M%SZ"


def backup_path(database: Path, revision: str, head: str, *, now: datetime | None = None) -> Path:
    """Beside the database, named after the upgrade and the time, so none overwrites another."""
    moment = (now or datetime.now(UTC)).strftime(_STAMP_FORMAT)
    return database.with_name(f"{database.name}.{revision}-to-{head}.{moment}.backup")


def _copy(source: Path, target: Path) -> None:
    # The online backup API copies a consistent snapshot, WAL content included, page by page.
    with closing(sqlite3.connect(source)) as origin, closing(sqlite3.connect(target)) as copy:
        origin.backup(copy)


async def backup_sqlite(source: Path, target: Path) -> None:
    await asyncio.to_thread(_copy, source, target)


def backups_of(database: Path) -> list[Path]:
    """The pre-upgrade copies beside ``database``, oldest first."""
    return sorted(database.parent.glob(f"{database.name}.*.backup"))


def backup_time(backup: Path) -> datetime:
    """When the copy was made: the time in its name, else the file's modification time."""
    found = _STAMP.search(backup.name)
    if found is not None:
        return datetime.strptime(found.group(1), _STAMP_FORMAT).replace(tzinfo=UTC)
    return datetime.fromtimestamp(backup.stat().st_mtime, UTC)


def _delete(backups: list[Path], reason: str) -> list[Path]:
    deleted = []
    for backup in backups:
        try:
            backup.unlink(missing_ok=True)
        except OSError as error:
            log.error("could not delete the pre-upgrade copy %s (%s): %s", backup, reason, error)
            continue
        log.warning("deleted the pre-upgrade copy %s: %s", backup, reason)
        deleted.append(backup)
    return deleted


async def delete_backups(database: Path, reason: str) -> list[Path]:
    """Delete every pre-upgrade copy of ``database``; the paths deleted."""
    return await asyncio.to_thread(lambda: _delete(backups_of(database), reason))


async def expire_backups(database: Path, *, older_than: datetime) -> list[Path]:
    """Delete the pre-upgrade copies made before ``older_than``; the paths deleted."""

    def expire() -> list[Path]:
        expired = [path for path in backups_of(database) if backup_time(path) < older_than]
        return _delete(expired, f"made before {older_than:%Y-%m-%d %H:%M} UTC, past its retention")

    return await asyncio.to_thread(expire)
