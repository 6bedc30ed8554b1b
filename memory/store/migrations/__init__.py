"""Schema migrations (Alembic) for SQLite and PostgreSQL alike.

Revisions in ``versions/`` are written by hand: copy the newest, work on both dialects
(``op.batch_alter_table`` where SQLite cannot ALTER), change ``schema.py`` to match, and
extend ``tests/memory/test_migrations.py``.
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
