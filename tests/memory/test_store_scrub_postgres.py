"""Forgetting on PostgreSQL: the deleted rows are vacuumed out of the table files.

Read from the test server's own data folder, after a checkpoint has written the pages. What
VACUUM cannot promise (a row's bytes left in a page's free space, the WAL until PostgreSQL
recycles it) is in KNOWN_ISSUES.md.
"""

from __future__ import annotations

from pathlib import Path

from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from tests.servers.postgres import PostgresServer

ALICE = Scope("console:alice", "console:room1")
SECRET = b"zebracorn-7731"


async def table_file(store: Store, server: PostgresServer, table: str) -> Path:
    await server.admin("CHECKPOINT")
    async with store.database.engine.connect() as connection:
        path = (
            await connection.exec_driver_sql(f"SELECT pg_relation_filepath('{table}')")
        ).scalar_one()
    return server.directory / str(path)


def holds_secret(path: Path) -> bool:
    return SECRET in path.read_bytes()


def secret_among_others(transaction: StoreTransaction) -> int:
    for number in range(40):
        transaction.facts.add(ALICE, NewFact(f"plain fact {number} " * 4))
    secret = transaction.facts.add(ALICE, NewFact(f"my code is {SECRET.decode()}"))
    for number in range(40):
        transaction.facts.add(ALICE, NewFact(f"other fact {number} " * 4))
    return secret.id


async def test_forgotten_words_are_vacuumed_out_of_the_table_file(
    postgres: PostgresServer,
) -> None:
    store = await Store.open(await postgres.fresh_database())
    try:
        secret_id = await store.write(secret_among_others)
        assert holds_secret(await table_file(store, postgres, "facts"))

        erased = await store.write(lambda transaction: transaction.forget.fact(ALICE, secret_id))
        assert erased is not None and erased.fact_ids == (secret_id,)
        assert holds_secret(await table_file(store, postgres, "facts")), "a dead row stays"
        await store.scrub()

        assert not holds_secret(await table_file(store, postgres, "facts"))
        assert await store.read(lambda transaction: transaction.facts.count(ALICE)) == 80
    finally:
        await store.aclose()
