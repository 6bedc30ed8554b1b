"""Schema upgrade time of a large SQLite database made before migrations.

    .venv/bin/python -m benchmarks.migration_time [--facts 100000] [--people 1000]

Copies the committed fixture made by commit 3844196 (tests/memory/store_fixtures; the schema
every install had before migrations), fills it with ``--facts`` facts over ``--people``
people, as many fact events and twice as many conversation turns, with plain SQL, then
times what start-up does (:func:`memory.store.migrations.upgrade_schema`: the online
backup copy, then every revision to head) and prints the time of each part.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from memory.store.database import sqlite_url
from memory.store.migrations import upgrade_schema
from memory.store.migrations.backup import backup_sqlite

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "memory"
    / "store_fixtures"
    / "mnemo-3844196.sqlite3"
)
CREATED = "2026-01-01 12:00:00.000000"


def fill(path: Path, facts: int, people: int) -> None:
    connection = sqlite3.connect(path)
    try:
        start = connection.execute("SELECT COALESCE(MAX(id), 0) FROM facts").fetchone()[0] + 1
        rows = [
            (start + n, f"discord:{n % people}", f"discord:room{n % people}",
             f"fact number {n} about person {n % people}", "other", "active", "extracted",
             CREATED, f"m{n}", "sentence-transformers/all-MiniLM-L6-v2")
            for n in range(facts)
        ]  # fmt: skip
        connection.executemany(
            "INSERT INTO facts (id, owner, room, text, category, status, source, created_at, "
            "source_message_id, embedding_model) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        connection.executemany(
            "INSERT INTO fact_events (owner, room, fact_id, final_action, new_text, actor, "
            "created_at) VALUES (?, ?, ?, 'ADD', ?, 'pipeline', ?)",
            [(row[1], row[2], row[0], row[3], CREATED) for row in rows],
        )
        connection.executemany(
            "INSERT INTO messages (room, author, role, text, created_at, platform_message_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (row[2], author, role, row[3], CREATED, row[8] if role == "user" else None)
                for row in rows
                for author, role in ((row[1], "user"), (None, "assistant"))
            ],
        )
        connection.commit()
    finally:
        connection.close()


async def measure(facts: int, people: int) -> None:
    with tempfile.TemporaryDirectory(prefix="mnemo-migration-") as name:
        database = Path(name) / "mnemo.sqlite3"
        shutil.copyfile(FIXTURE, database)
        fill(database, facts, people)
        size = database.stat().st_size
        started = time.perf_counter()
        await backup_sqlite(database, Path(name) / "copy-only.backup")
        backup_seconds = time.perf_counter() - started
        started = time.perf_counter()
        outcome = await upgrade_schema(sqlite_url(database))
        total = time.perf_counter() - started
        before = outcome.before
        print(f"{facts} facts, {size / 2**20:.0f} MiB database, revision {before.revision}")
        print(f"(made before migrations: {before.legacy}) upgraded to {outcome.after}")
        print(f"start-up upgrade (backup + revisions): {total:.2f} s")
        print(f"of which the backup copy alone takes about: {backup_seconds:.2f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=1000)
    arguments = parser.parse_args()
    asyncio.run(measure(arguments.facts, arguments.people))
