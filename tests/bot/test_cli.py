"""The ``mnemo`` command line, run in-process on a temporary data directory."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from loguru import logger

from adapters.main import main
from bot.cli import send_loguru_to_logging
from bot.data_folder import exclusive_data_folder
from memory.errors import StoreError
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store
from tests.conftest import LOCAL_MODEL_DIRECTORY, real_embedder
from tests.servers.ollama_server import OllamaServer


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    path = tmp_path / "mnemo.toml"
    model_path = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    path.write_text(f'[storage]\ndata_dir = "data"\n[embedding]\n{model_path}\n', encoding="utf-8")
    return path


def test_doctor_reports_each_check(
    config_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The doctor also checks the LLM: an Ollama-shaped server with the default model.
    with OllamaServer(models=("llama3.1:8b",)) as ollama:
        monkeypatch.setenv("MNEMO_LLM__BASE_URL", ollama.base_url)
        assert main(["--config", str(config_file), "doctor"]) == 0
    output = capsys.readouterr().out
    for name in ("data folder", "database", "embedding model", "vector index"):
        assert f"ok   {name}" in output
    assert "384 dimensions" in output
    assert "database: " in output and "none yet; the bot makes it at start-up" in output
    # The doctor reads; it made no data folder, database or index.
    assert not (config_file.parent / "data").exists()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file's bytes, but SQLite's shared-memory index (readers mark it by design)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.endswith("-shm")
    }


async def fill(data_dir: Path) -> None:
    store = await Store.open(data_dir / "mnemo.sqlite3")
    index = await LanceFactIndex.open(data_dir / "index", dimension=384)
    embedder = real_embedder()
    await store.write(
        lambda transaction: transaction.facts.add(
            Scope("console:alice", "console:dm"), NewFact("I own a kayak")
        )
    )
    await reconcile(store, index, embedder)
    for part in (index, embedder, store):
        await part.aclose()


def test_doctor_beside_a_running_bot_reads_and_changes_nothing(
    config_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data_dir = config_file.parent / "data"
    asyncio.run(fill(data_dir))
    # The running bot: it holds the folder's lock and an open database connection.
    with (
        exclusive_data_folder(data_dir),
        closing(sqlite3.connect(data_dir / "mnemo.sqlite3")) as running,
    ):
        running.execute("SELECT count(*) FROM facts").fetchone()
        before = snapshot(data_dir)
        with OllamaServer(models=("llama3.1:8b",)) as ollama:
            monkeypatch.setenv("MNEMO_LLM__BASE_URL", ollama.base_url)
            assert main(["--config", str(config_file), "doctor"]) == 0
        assert snapshot(data_dir) == before
    output = capsys.readouterr().out
    assert f"ok   data folder: {data_dir} (in use by Mnemo (PID {os.getpid()}))" in output
    assert "(current), 0 messages waiting for memory" in output
    assert "ok   vector index: in step with the database" in output


def test_doctor_reads_a_database_it_may_not_change(
    config_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read-only open really is read-only: a write through it is refused."""
    data_dir = config_file.parent / "data"
    asyncio.run(fill(data_dir))

    async def try_to_write() -> str:
        store = Store.open_read_only(data_dir / "mnemo.sqlite3")
        try:
            await store.write(
                lambda transaction: transaction.facts.add(
                    Scope("console:bob", "console:dm"), NewFact("x")
                )
            )
        except StoreError as error:
            return str(error)
        finally:
            await store.aclose()
        return "written"

    assert "readonly database" in asyncio.run(try_to_write())


def test_doctor_fails_with_the_fix_for_a_broken_model(
    config_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMO_EMBEDDING__MODEL_PATH", str(config_file.parent / "no-model"))
    assert main(["--config", str(config_file), "doctor"]) == 1
    assert "FAIL embedding model" in capsys.readouterr().out


def test_config_error_is_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mnemo.toml"
    path.write_text("[memory]\nrecall_top_k = 0\n", encoding="utf-8")
    assert main(["--config", str(path), "doctor"]) == 2
    error = capsys.readouterr().err
    assert "memory.recall_top_k" in error
    assert "Traceback" not in error


def test_reconcile_command(config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(config_file), "reconcile", "--dry-run"]) == 0
    assert "would repair: 0 missing, 0 stale, 0 re-embedded" in capsys.readouterr().out


@pytest.fixture
def loguru_restored() -> Iterator[None]:
    yield
    logger.remove()
    logger.add(sys.stderr)


def test_fastembeds_loguru_lines_join_the_log_not_the_terminal(
    loguru_restored: None, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    send_loguru_to_logging()
    from_fastembed = logger.patch(
        lambda record: record.update({"name": "fastembed.common.model_management"})
    )
    with caplog.at_level(logging.INFO):
        from_fastembed.error("Could not download model from HuggingFace")
        from_fastembed.debug("below the log's level")
    assert [(r.name, r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            "fastembed.common.model_management",
            logging.ERROR,
            "Could not download model from HuggingFace",
        )
    ]
    assert "Could not download" not in capsys.readouterr().err
