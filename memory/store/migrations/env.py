"""Alembic's environment, run by :mod:`memory.store.migrations.runner` (never by an ini file).

Online, the runner's connection is already in its transaction, so an upgrade commits as one.
"""

from __future__ import annotations

from alembic import context

configuration = context.config
connection = configuration.attributes.get("connection")

if context.is_offline_mode():
    context.configure(
        dialect_name=configuration.attributes["dialect_name"],
        literal_binds=True,
        transactional_ddl=True,
    )
else:
    context.configure(connection=connection, transactional_ddl=True)

with context.begin_transaction():
    context.run_migrations()
