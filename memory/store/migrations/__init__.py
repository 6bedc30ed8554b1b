"""Schema migrations (Alembic) for SQLite and PostgreSQL alike.

The revisions are in ``versions/``, one file each, written by hand (no autogenerate at run
time). To add one: copy the newest file, set ``revision`` to the next number and
``down_revision`` to the one before, write ``upgrade()`` with ``op`` calls that work on both
dialects (``op.batch_alter_table`` for what SQLite cannot ALTER; foreign keys are off while
it runs and checked before commit), change ``memory/store/schema.py`` to match, and extend
``tests/memory/test_migrations.py``: it checks that the newest revision makes exactly what
``schema.py`` declares, on both dialects, and that the database of commit 3844196 keeps
every row.
"""

from memory.store.migrations.runner import (
    BASELINE,
    SchemaState,
    UpgradeOutcome,
    describe,
    head_revision,
    inspect_schema,
    require_current_schema,
    upgrade_schema,
    upgrade_sql,
)

__all__ = [
    "BASELINE",
    "SchemaState",
    "UpgradeOutcome",
    "describe",
    "head_revision",
    "inspect_schema",
    "require_current_schema",
    "upgrade_schema",
    "upgrade_sql",
]
