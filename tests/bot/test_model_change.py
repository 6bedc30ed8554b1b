"""Changing the embedding model of a store that has facts, both ways: `mnemo reconcile`
re-embeds every fact, one killed with SIGKILL resumes where it stopped, and meanwhile a
search with the new model finds only the facts it has re-embedded.

The new model is EmbeddingGemma (another dimension: the index is rebuilt), or a test double of
all-MiniLM-L6-v2's dimension behind an Ollama-shaped server (the same table holds both
models' rows until reconcile is done)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.main import main
from bot.components import open_memory
from bot.config import load_config
from memory.index import LanceFactIndex
from memory.recall import Recaller, RecallSettings
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
from tests.servers.ollama_server import OllamaServer

FACTS = 600
ALICE = Scope("console:alice", "console:room1")
BOB = Scope("console:bob", "console:room1")
TEST_DOUBLE = "test-double-384"


@dataclass(frozen=True)
class NewModel:
    config: Path
    name: str  # as the index and the facts record it
    dimension: int
    # Answers the dimension probe and the first batch, then holds every embedding back
    # until released, so the kill comes midway (None: the model itself is slow enough).
    server: OllamaServer | None = None

    def midway(self) -> bool:
        """Whether reconcile has re-embedded some facts: committed, and (with the server)
        written to the index too, as the batch after them was asked for."""
        if self.server is not None:
            return self.server.embeds > (self.server.embeds_before_hold or 0)
        return _embedded_by(self.config, self.name) > 0

    def release(self) -> None:
        if self.server is not None:
            self.server.embeds_released.set()


def _config(tmp_path: Path, name: str, embedding: str) -> Path:
    path = tmp_path / f"{name}.toml"
    text = f'[storage]\ndata_dir = "{tmp_path / "data"}"\n[embedding]\n{embedding}'
    path.write_text(text, encoding="utf-8")
    return path


def _fastembed(tmp_path: Path, model: str, model_path: Path) -> Path:
    embedding = f'model = "{model}"\nmodel_path = "{model_path}"\n'
    return _config(tmp_path, model.replace("/", "_"), embedding)


@pytest.fixture(params=["embeddinggemma", "same dimension"])
def new_model(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NewModel]:
    if request.param == "embeddinggemma":
        folder = embeddinggemma_directory()
        if folder is None:
            pytest.skip("EmbeddingGemma not built: ../shared/models/embeddinggemma/setup.sh int8")
        yield NewModel(_fastembed(tmp_path, EMBEDDINGGEMMA, folder), EMBEDDINGGEMMA, 768)
        return
    server = OllamaServer(models=(TEST_DOUBLE,), embedding_dimension=384, embeds_before_hold=2)
    with server:
        embedding = f'backend = "ollama"\nmodel = "{TEST_DOUBLE}"\nollama_url = "{server.origin}"\n'
        config = _config(tmp_path, TEST_DOUBLE, embedding)
        try:
            yield NewModel(config, f"ollama/{TEST_DOUBLE}", 384, server)
        finally:
            server.embeds_released.set()


async def _add_facts(config_path: Path) -> tuple[list[int], set[int]]:
    """Alice's and Bob's facts, none indexed yet: every id, and Alice's."""
    config = load_config(config_path, environ={})
    config.storage.data_dir.mkdir(parents=True)
    store = await Store.open(config.storage.database_path)
    facts = await store.write(
        lambda transaction: [
            transaction.facts.add(
                ALICE if n % 2 else BOB, NewFact(f"My colleague number {n} plays chess")
            )
            for n in range(FACTS)
        ]
    )
    await store.aclose()
    return [fact.id for fact in facts], {fact.id for fact in facts if fact.owner == ALICE.owner}


def _embedded_by(config_path: Path, model: str) -> int:
    database = load_config(config_path, environ={}).storage.database_path
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        query = "SELECT count(*) FROM facts WHERE embedding_model = ?"
        return int(connection.execute(query, (model,)).fetchone()[0])


async def _index_rows(config_path: Path) -> tuple[int, dict[int, str]]:
    """The index's dimension, and each indexed fact's model."""
    config = load_config(config_path, environ={})
    index = await LanceFactIndex.open_read_only(config.storage.index_path)
    assert index is not None
    try:
        return await index.dimension(), await index.indexed_models()
    finally:
        await index.aclose()


def _counts(rows: dict[int, str]) -> dict[str, int]:
    models = list(rows.values())
    return {model: models.count(model) for model in set(models)}


async def _recalled(config_path: Path) -> set[int]:
    """Alice's facts that recall finds with the configured model, as the bot would search."""
    config = load_config(config_path, environ={})
    memory = await open_memory(config, run_reconcile=False, repair=False)
    try:
        settings = RecallSettings(top_k=FACTS)
        recaller = Recaller(memory.store, memory.index, memory.embedder, settings)
        return {item.fact.id for item in await recaller.passive(ALICE, "Who plays chess?")}
    finally:
        await memory.aclose()


def _killed_midway(model: NewModel, log: Path) -> None:
    """`mnemo reconcile` in its own process, killed with SIGKILL once some facts (not all)
    carry the new model."""
    command = [sys.executable, "-m", "adapters.main", "--config", str(model.config), "reconcile"]
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=REPOSITORY_ROOT, stdout=output, stderr=output)
    try:
        deadline = time.monotonic() + 600
        while not model.midway():
            assert process.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline
            time.sleep(0.1)
        process.kill()
    finally:
        process.wait()


def test_a_change_of_model_re_embeds_everything_and_resumes_after_kill(
    tmp_path: Path, new_model: NewModel, capsys: pytest.CaptureFixture[str]
) -> None:
    minilm = _fastembed(tmp_path, MODEL_NAME, LOCAL_MODEL_DIRECTORY)
    every, alices = asyncio.run(_add_facts(minilm))
    assert main(["--config", str(minilm), "reconcile"]) == 0
    assert _embedded_by(minilm, MODEL_NAME) == FACTS
    assert asyncio.run(_index_rows(minilm)) == (384, dict.fromkeys(every, MODEL_NAME))
    assert asyncio.run(_recalled(minilm)) == alices

    _killed_midway(new_model, tmp_path / "killed.log")
    new_model.release()
    done = _embedded_by(new_model.config, new_model.name)
    assert 0 < done < FACTS, "the reconcile was not stopped midway"
    # The kill may fall between a batch's commit and its index write, so the index may hold
    # fewer facts than the database says are embedded (none at all): the next reconcile
    # adds them. Of another dimension, the index was rebuilt; of the same, it holds both
    # models' rows.
    dimension, rows = asyncio.run(_index_rows(new_model.config))
    counts = _counts(rows)
    assert dimension == new_model.dimension
    assert set(counts) <= ({new_model.name} if dimension == 768 else {new_model.name, MODEL_NAME})
    assert counts.get(new_model.name, 0) <= done
    # Until then, the new model's searches see only its own vectors: no fact of the old
    # model is compared with the new query.
    re_embedded = {fact_id for fact_id, model in rows.items() if model == new_model.name}
    assert asyncio.run(_recalled(new_model.config)) == alices & re_embedded

    capsys.readouterr()
    assert main(["--config", str(new_model.config), "reconcile"]) == 0
    missing = FACTS - len(rows)
    outdated = counts.get(MODEL_NAME, 0)
    assert (
        f"repaired: {missing} missing, 0 stale, {outdated} re-embedded" in capsys.readouterr().out
    )
    assert _embedded_by(new_model.config, new_model.name) == FACTS
    rebuilt = (new_model.dimension, dict.fromkeys(every, new_model.name))
    assert asyncio.run(_index_rows(new_model.config)) == rebuilt
    assert asyncio.run(_recalled(new_model.config)) == alices

    # And back to the small model.
    assert main(["--config", str(minilm), "reconcile"]) == 0
    assert _embedded_by(minilm, MODEL_NAME) == FACTS
    assert asyncio.run(_index_rows(minilm)) == (384, dict.fromkeys(every, MODEL_NAME))
    assert asyncio.run(_recalled(minilm)) == alices
