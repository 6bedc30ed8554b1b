"""A process starting on PostgreSQL while another holds a person's lock starts anyway: its
start-up reconcile stops at the lock's time limit, says so in the log with what repairs it,
and the next reconcile does.

Another process is a second store on the same database, holding Alice's lock in an open
transaction (as a long write of hers would). The database's lock wait is shortened for the
test (5 s in use); the timeout is PostgreSQL's own.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import URL, update

from bot.components import open_memory
from memory.embedding import FastEmbedEmbedder
from memory.indexing import reconcile
from memory.store import Store, database
from memory.store.people_lock import lock_people
from memory.store.schema import FactVectorRow
from memory.store.vectors import PgVectorIndex
from tests.bot.core.harness import make_config
from tests.memory.write.helpers import ALICE, seed
from tests.servers.postgres import PostgresServer

LOCK_WAIT_MILLISECONDS = 300


async def paris_of_an_earlier_model(url: URL, embedder: FastEmbedEmbedder) -> None:
    """Alice's fact with a vector an earlier embedding model made: the start re-embeds it,
    which takes her lock."""
    store = await Store.open(url)
    try:
        index = await PgVectorIndex.open(store.database, dimension=384)
        await seed(store, index, embedder, ALICE, "I live in Paris")
        await store.write(
            lambda transaction: transaction.session.execute(
                update(FactVectorRow).values(model="an-earlier-model")
            )
        )
    finally:
        await store.aclose()


@asynccontextmanager
async def alice_held_elsewhere(url: URL) -> AsyncIterator[None]:
    """Another process holds Alice's lock until the block ends."""
    store = await Store.open(url)
    held, release = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        # A store job cannot wait for the release: the lock is held in a session of the
        # database itself, one transaction open until the block ends.
        async with store.database.session() as session:
            await session.run_sync(lock_people, [ALICE.owner])
            held.set()
            await release.wait()

    holding = asyncio.create_task(hold())
    try:
        await held.wait()
        yield
    finally:
        release.set()
        await holding
        await store.aclose()


async def test_a_start_while_another_process_holds_a_person_is_not_stopped(
    postgres: PostgresServer,
    embedder: FastEmbedEmbedder,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_MILLISECONDS", LOCK_WAIT_MILLISECONDS)
    url = await postgres.fresh_database()
    await paris_of_an_earlier_model(url, embedder)
    config = make_config(tmp_path, database=url)

    with caplog.at_level(logging.WARNING, logger="bot.components"):
        async with alice_held_elsewhere(url):
            memory = await open_memory(config, embedder=embedder)
    try:
        (warning,) = [r.getMessage() for r in caplog.records if r.name == "bot.components"]
        assert "start-up reconcile stopped (the database is locked" in warning
        assert "starting anyway" in warning
        assert "every 360 minutes, scheduler.reconcile_interval_minutes" in warning
        assert "`mnemo reconcile`" in warning

        planned = await reconcile(memory.store, memory.index, embedder, dry_run=True)
        assert planned.reembedded == 1  # the vector the start could not write
        assert (await reconcile(memory.store, memory.index, embedder)).reembedded == 1
        assert (await reconcile(memory.store, memory.index, embedder, dry_run=True)).in_step
    finally:
        await memory.store.aclose()
