"""Changing the embedding model of a store that has facts, both ways, with the real models:
`mnemo reconcile` re-embeds every fact, and one killed with SIGKILL resumes where it stopped."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adapters.main import main
from bot.config import load_config
from memory.index import LanceFactIndex
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store
from tests.conftest import (
    EMBEDDINGGEMMA,
    LOCAL_MODEL_DIRECTORY,
    MODEL_NAME,
    REPOSITORY_ROOT,
    embeddinggemma_directory,
)

FACTS = 600
ALICE = Scope("console:alice", "console:room1")
BOB = Scope("console:bob", "console:room1")


def _config(tmp_path: Path, model: str, model_path: Path) -> Path:
    path = tmp_path / f"{model.replace('/', '_')}.toml"
    text = f'[storage]\ndata_dir = "{tmp_path / "data"}"\n'
    text += f'[embedding]\nmodel = "{model}"\nmodel_path = "{model_path}"\n'
    path.write_text(text, encoding="utf-8")
    return path


async def _add_facts(config_path: Path) -> None:
    config = load_config(config_path, environ={})
    config.storage.data_dir.mkdir(parents=True)
    store = await Store.open(config.storage.database_path)
    async with store.transaction() as transaction:
        for n in range(FACTS):
            scope = ALICE if n % 2 else BOB
            await transaction.facts.add(scope, NewFact(f"My colleague number {n} plays chess"))
    await store.aclose()


def _embedded_by(config_path: Path, model: str) -> int:
    database = load_config(config_path, environ={}).storage.database_path
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        query = "SELECT count(*) FROM facts WHERE embedding_model = ?"
        return int(connection.execute(query, (model,)).fetchone()[0])


async def _index_rows(config_path: Path) -> tuple[int, dict[str, int]]:
    config = load_config(config_path, environ={})
    index = await LanceFactIndex.open_read_only(config.storage.index_path)
    assert index is not None
    try:
        models = list((await index.indexed_models()).values())
        return await index.dimension(), {model: models.count(model) for model in set(models)}
    finally:
        await index.aclose()


def _killed_midway(config_path: Path, model: str, log: Path) -> None:
    """`mnemo reconcile` in its own process, killed with SIGKILL once some facts (not all)
    carry the new model."""
    command = [sys.executable, "-m", "adapters.main", "--config", str(config_path), "reconcile"]
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=REPOSITORY_ROOT, stdout=output, stderr=output)
    try:
        deadline = time.monotonic() + 600
        while _embedded_by(config_path, model) == 0:
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline
            time.sleep(0.1)
        process.kill()
    finally:
        process.wait()


def test_a_change_of_model_re_embeds_everything_and_resumes_after_kill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gemma_folder = embeddinggemma_directory()
    if gemma_folder is None:
        pytest.skip("EmbeddingGemma not built: run ../shared/models/embeddinggemma/setup.sh int8")
    minilm = _config(tmp_path, MODEL_NAME, LOCAL_MODEL_DIRECTORY)
    gemma = _config(tmp_path, EMBEDDINGGEMMA, gemma_folder)
    asyncio.run(_add_facts(minilm))
    assert main(["--config", str(minilm), "reconcile"]) == 0
    assert _embedded_by(minilm, MODEL_NAME) == FACTS
    assert asyncio.run(_index_rows(minilm)) == (384, {MODEL_NAME: FACTS})

    _killed_midway(gemma, EMBEDDINGGEMMA, tmp_path / "killed.log")
    done = _embedded_by(gemma, EMBEDDINGGEMMA)
    assert 0 < done < FACTS, "the reconcile was not stopped midway"
    # The index was rebuilt for the new dimension: nothing of the old model is searched. The
    # kill may fall between a batch's commit and its index write, so the index may hold fewer
    # facts than the database says are embedded (none at all): the next reconcile adds them.
    dimension, rows = asyncio.run(_index_rows(gemma))
    assert dimension == 768 and set(rows) <= {EMBEDDINGGEMMA}
    assert rows.get(EMBEDDINGGEMMA, 0) <= done

    capsys.readouterr()
    assert main(["--config", str(gemma), "reconcile"]) == 0
    missing = FACTS - rows.get(EMBEDDINGGEMMA, 0)
    assert f"repaired: {missing} missing" in capsys.readouterr().out
    assert _embedded_by(gemma, EMBEDDINGGEMMA) == FACTS
    assert asyncio.run(_index_rows(gemma)) == (768, {EMBEDDINGGEMMA: FACTS})

    # And back to the small model.
    assert main(["--config", str(minilm), "reconcile"]) == 0
    assert _embedded_by(minilm, MODEL_NAME) == FACTS
    assert asyncio.run(_index_rows(minilm)) == (384, {MODEL_NAME: FACTS})
