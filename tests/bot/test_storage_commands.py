"""`mnemo doctor` reports the data folder's size and what is reclaimable; `mnemo compact`
gives it back."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.main import main
from bot.config import Config
from bot.doctor.base import CheckStatus
from bot.doctor.storage import check_storage_space
from bot.scheduler import storage_job
from memory.embedding import HashingEmbedder
from memory.index import LanceFactIndex
from memory.index.lance import folder_bytes
from memory.indexing import index_facts
from memory.records import Fact, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.migrations.backup import backup_path, backup_sqlite, backups_of
from memory.store.space import database_space, switch_to_incremental_vacuum
from tests.bot.core.harness import make_config
from tests.conftest import LOCAL_MODEL_DIRECTORY

ALICE = Scope("console:alice", "console:room1")
BOB = Scope("console:bob", "console:room1")
PADDING = " with a long tail of words to make the rows take some room" * 3


def add_facts(transaction: StoreTransaction) -> tuple[list[Fact], list[Fact]]:
    """600 facts of Alice's and 20 of Bob's."""
    alice = [transaction.facts.add(ALICE, NewFact(f"a{n}{PADDING}")) for n in range(600)]
    bob = [transaction.facts.add(BOB, NewFact(f"b{n}{PADDING}")) for n in range(20)]
    return alice, bob


async def _data_folder_with_waste(config: Config) -> None:
    """A database made without incremental vacuum and an index holding deleted rows, as a
    bot of the last version leaves them after Alice forgot most of what she said (vectors
    from the hashing embedder: `mnemo compact` re-embeds Bob's facts with the real one)."""
    embedder = HashingEmbedder(dimension=384)
    store = await Store.open(config.storage.database_path)
    index = await LanceFactIndex.open(config.storage.index_path, dimension=384)
    alice, bob = await store.write(add_facts)
    await index_facts(index, embedder, alice + bob)
    await store.write(lambda transaction: transaction.facts.erase_all(ALICE))
    await index.delete([fact.id for fact in alice[:50]])
    await index.aclose()
    await store.aclose()


def _files(config: Config) -> list[str]:
    """The data folder's files, but for the shared-memory file a read-only reader of a WAL
    database may leave (SQLite needs it to read; it holds no data)."""
    names = (path.name for path in config.storage.data_dir.rglob("*"))
    return sorted(name for name in names if not name.endswith(("-shm", "-wal")))


def _config_file(tmp_path: Path, data_dir: Path) -> Path:
    model = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    path = tmp_path / "mnemo.toml"
    path.write_text(f'[storage]\ndata_dir = "{data_dir}"\n[embedding]\n{model}\n', "utf-8")
    return path


async def test_the_doctor_skips_a_data_folder_not_made_yet(tmp_path: Path) -> None:
    result = await check_storage_space(make_config(tmp_path / "nothing-yet"))
    assert result.status is CheckStatus.SKIP
    assert not (tmp_path / "nothing-yet").exists()


async def test_the_doctor_reports_sizes_and_what_compact_would_give_back(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    await _data_folder_with_waste(config)
    before = _files(config)

    result = await check_storage_space(config)

    assert result.status is CheckStatus.WARN
    assert "database" in result.detail and "index" in result.detail
    assert "reclaimable" in result.detail and "run `mnemo compact` once" in result.detail
    assert _files(config) == before


def test_mnemo_compact_gives_the_space_back(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = make_config(tmp_path / "data")
    asyncio.run(_data_folder_with_waste(config))
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    size_before = folder_bytes(config.storage.data_dir)

    assert main(["--config", str(_config_file(tmp_path, config.storage.data_dir)), "compact"]) == 0

    assert " -> " in capsys.readouterr().out
    assert folder_bytes(config.storage.data_dir) < size_before * 0.6
    result = asyncio.run(check_storage_space(config))
    assert result.status is CheckStatus.OK, result.detail
    assert asyncio.run(_count_everything(config)) == (20, 20)


async def _count_everything(config: Config) -> tuple[int, int]:
    store = await Store.open(config.storage.database_path)
    index = await LanceFactIndex.open(config.storage.index_path, dimension=384)
    facts = len(await store.read(lambda transaction: transaction.facts.admin_active_facts()))
    indexed = await index.count()
    await index.aclose()
    await store.aclose()
    return facts, indexed


async def test_the_scheduled_storage_job_compacts_and_gives_pages_back(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    await _data_folder_with_waste(config)
    store = await Store.open(config.storage.database_path)
    await switch_to_incremental_vacuum(store.database)
    index = await LanceFactIndex.open(config.storage.index_path, dimension=384)
    await store.write(lambda transaction: transaction.facts.erase_all(BOB))
    await index.delete(list(range(1, 700)))
    freed = await database_space(store.database)
    assert freed is not None and freed.free_bytes > 0

    summary = await storage_job(config, store, index).run()

    assert "MiB of free database pages given back" in summary
    after = await database_space(store.database)
    assert after is not None and after.free_bytes == 0
    assert (await index.space()).versions == 1
    await index.aclose()
    await store.aclose()


async def test_the_storage_job_deletes_pre_upgrade_copies_past_their_retention(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = make_config(tmp_path / "data")
    store = await Store.open(config.storage.database_path)
    index = await LanceFactIndex.open(config.storage.index_path, dimension=384)
    database = config.storage.database_path
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    old = backup_path(database, "0002", "0003", now=now - timedelta(days=31))
    young = backup_path(database, "0003", "0004", now=now - timedelta(days=29))
    for copy in (old, young):
        await backup_sqlite(database, copy)

    summary = await storage_job(config, store, index, clock=lambda: now).run()

    assert "1 expired pre-upgrade copies deleted" in summary
    assert backups_of(database) == [young]
    assert f"deleted the pre-upgrade copy {old}: made before 2026-10-31 12:00 UTC" in caplog.text
    await index.aclose()
    await store.aclose()
