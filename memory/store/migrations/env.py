"""Alembic's environment, run by :mod:`memory.store.migrations.runner` (never by an ini file).

Online, the runner hands over a connection that is already inside its transaction, so the
whole upgrade commits or rolls back as one. Offline (``mnemo migrate --sql``) only the dialect
is known and the SQL is written to the runner's buffer.
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
