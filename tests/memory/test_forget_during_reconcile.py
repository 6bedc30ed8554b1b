"""A forget that falls between reconcile's reading of SQLite and its writing of the index
leaves no word of the fact in the index files: reconcile reads its facts again and writes
their rows in one turn of the store's writer, and a forget commits and erases in a turn of
its own, so one comes wholly before the other. Each order is forced with a gate in the test.
On PostgreSQL a forget in another process takes no turn of this process: the vectors'
foreign key to the facts and the people's lock reconcile's write takes keep the fact out."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.llm import ScriptedLanguageModel
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.vectors import PgVectorIndex
from memory.write import MemoryWriter, WriteSettings
from tests.memory.paused_parts import PausedEmbedder, PausedIndex
from tests.memory.raw_bytes import files_containing
from tests.servers.postgres import PostgresServer

ALICE = Scope("console:alice", "console:room1")
SECRET = "My passphrase is PERSIMMON-7"
TOKEN = "PERSIMMON-7"


def _add_secret_and_kept(transaction: StoreTransaction) -> tuple[int, int]:
    secret = transaction.facts.add(ALICE, NewFact(SECRET))
    kept = transaction.facts.add(ALICE, NewFact("I live in Paris"))
    return secret.id, kept.id


async def _facts_not_yet_indexed(store: Store) -> tuple[int, int]:
    return await store.write(_add_secret_and_kept)


async def test_a_fact_forgotten_while_reconcile_embeds_it_is_not_written_back(
    store: Store, embedder: FastEmbedEmbedder, tmp_path: Path
) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=384)
    secret_id, kept_id = await _facts_not_yet_indexed(store)
    paused = PausedEmbedder(embedder)
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())

    reconciling = asyncio.create_task(reconcile(store, index, paused))
    await paused.entered.wait()  # reconcile has read both facts as active
    assert await writer.forget(ALICE, secret_id)
    paused.gate.set()
    report = await reconciling

    assert report.missing == 2
    assert set(await index.indexed_models()) == {kept_id}
    assert files_containing(tmp_path / "index", TOKEN) == []
    assert (await reconcile(store, index, embedder)).in_step
    await index.aclose()


async def test_a_forget_during_reconciles_index_write_erases_after_it(
    sqlite_store: Store, embedder: FastEmbedEmbedder, tmp_path: Path
) -> None:
    """LanceDB's files beside SQLite (PostgreSQL keeps its vectors in the database)."""
    store = sqlite_store
    index = PausedIndex(await LanceFactIndex.open(tmp_path / "index", dimension=384))
    secret_id, kept_id = await _facts_not_yet_indexed(store)
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())

    reconciling = asyncio.create_task(reconcile(store, index, embedder))
    await index.upsert_entered.wait()  # re-read in its turn: both facts still active
    forgetting = asyncio.create_task(writer.forget(ALICE, secret_id))
    await asyncio.sleep(0.2)
    # The forget waits for its turn: committed now, its erase would come before the paused
    # write, which would put the fact back.
    assert not forgetting.done() and not index.erase_entered.is_set()
    active = await store.read(lambda transaction: transaction.facts.admin_active_ids([secret_id]))
    assert active == {secret_id}
    index.gate.set()
    await reconciling
    assert await forgetting

    assert set(await index.indexed_models()) == {kept_id}
    assert files_containing(tmp_path / "index", TOKEN) == []
    await index.aclose()


async def test_on_postgresql_a_forget_in_another_process_is_not_written_back(
    postgres: PostgresServer, embedder: FastEmbedEmbedder
) -> None:
    """Two stores on one database are two processes: the forget does not pass reconcile's
    turns. It commits after reconcile re-read the fact as active and before its
    write; the write leaves the forgotten fact out (no vector without its fact) and fails
    nothing, the other fact is indexed."""
    url = await postgres.fresh_database()
    reconciling_store, forgetting_store = await Store.open(url), await Store.open(url)
    try:
        vectors = await PgVectorIndex.open(reconciling_store.database, dimension=384)
        index = PausedIndex(vectors)
        other_process_index = await PgVectorIndex.open(forgetting_store.database, dimension=384)
        secret_id, kept_id = await _facts_not_yet_indexed(reconciling_store)
        writer = MemoryWriter(
            forgetting_store,
            other_process_index,
            embedder,
            ScriptedLanguageModel(),
            WriteSettings(),
        )

        reconciling = asyncio.create_task(reconcile(reconciling_store, index, embedder))
        await index.upsert_entered.wait()  # re-read in its own turn: both still active
        assert await writer.forget(ALICE, secret_id)
        index.gate.set()
        report = await reconciling

        assert report.missing == 2
        assert set(await index.indexed_models()) == {kept_id}
        assert await vectors.count() == 1
        assert (await reconcile(reconciling_store, index, embedder)).in_step
    finally:
        await reconciling_store.aclose()
        await forgetting_store.aclose()
