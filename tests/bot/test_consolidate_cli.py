"""``mnemo consolidate``: in-process, real files, the real Ollama client against an
Ollama-shaped HTTP server on 127.0.0.1 that judges like a good model (scripted)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from adapters.main import main
from memory.embedding.base import Embedder
from memory.index import LanceFactIndex
from memory.llm import ChatMessage
from memory.records import Fact, FactStatus
from memory.store import Store
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.memory.consolidation.helpers import ALICE_DM, GoodJudge, add_facts
from tests.servers.ollama_server import OllamaServer

TEXTS = ["I have a dog named Rex", "My dog Rex", "I like tea.", "i like TEA"]


def write_config(directory: Path, llm_url: str) -> Path:
    path = directory / "mnemo.toml"
    model_path = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    path.write_text(
        f'[storage]\ndata_dir = "data"\n[embedding]\n{model_path}\n[llm]\nbase_url = "{llm_url}"\n',
        encoding="utf-8",
    )
    return path


async def seed(data_dir: Path, embedder: Embedder) -> list[Fact]:
    store = await Store.open(data_dir / "mnemo.sqlite3")
    index = await LanceFactIndex.open(data_dir / "index", dimension=384)
    try:
        return await add_facts(store, index, embedder, ALICE_DM, TEXTS)
    finally:
        await index.aclose()
        await store.aclose()


async def statuses(data_dir: Path, facts: list[Fact]) -> list[FactStatus]:
    store = await Store.open(data_dir / "mnemo.sqlite3")
    try:
        ids = [fact.id for fact in facts]
        found = await store.read(lambda transaction: transaction.facts.get_many(ALICE_DM, ids))
    finally:
        await store.aclose()
    by_id = {fact.id: fact.status for fact in found}
    return [by_id[fact.id] for fact in facts]


def judge_request(body: dict[str, Any]) -> str:
    messages = [ChatMessage(m["role"], m["content"]) for m in body["messages"]]
    return GoodJudge({(TEXTS[0], TEXTS[1]): ("same", "A")})(messages)


@pytest.fixture
def ollama() -> Any:
    with OllamaServer(fallback=judge_request) as server:
        yield server


def test_dry_run_prints_what_it_would_merge_and_changes_nothing(
    tmp_path: Path,
    embedder: Embedder,
    ollama: OllamaServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps table cells at the terminal width
    config = write_config(tmp_path, ollama.base_url)
    facts = asyncio.run(seed(tmp_path / "data", embedder))

    assert main(["--config", str(config), "consolidate", "--dry-run"]) == 0

    output = capsys.readouterr().out
    assert "would change 2" in output
    assert "My dog Rex" in output and "normalised_text_equal" in output
    assert asyncio.run(statuses(tmp_path / "data", facts)) == [FactStatus.ACTIVE] * 4
    assert len(ollama.requests) == 1
    assert ollama.requests[0]["format"]["required"] == ["verdicts"]

    assert main(["--config", str(config), "consolidate"]) == 0

    assert "changed 2" in capsys.readouterr().out
    assert asyncio.run(statuses(tmp_path / "data", facts)) == [
        FactStatus.ACTIVE,
        FactStatus.MERGED,
        FactStatus.ACTIVE,
        FactStatus.MERGED,
    ]


def test_without_the_model_only_identical_texts_merge_and_it_says_why(
    tmp_path: Path,
    embedder: Embedder,
    ollama: OllamaServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    config = write_config(tmp_path, ollama.base_url)
    facts = asyncio.run(seed(tmp_path / "data", embedder))

    assert main(["--config", str(config), "consolidate", "--no-llm"]) == 0

    output = capsys.readouterr().out
    assert "changed 1" in output
    assert "1 similar pairs left alone: without a language model" in output
    assert ollama.requests == []
    assert asyncio.run(statuses(tmp_path / "data", facts)) == [
        FactStatus.ACTIVE,
        FactStatus.ACTIVE,
        FactStatus.ACTIVE,
        FactStatus.MERGED,
    ]


def test_an_unreachable_model_leaves_pairs_for_later_and_says_so(
    tmp_path: Path,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    with OllamaServer() as server:
        url = server.base_url  # nothing listens here any more once the block ends
    config = write_config(tmp_path, url)
    facts = asyncio.run(seed(tmp_path / "data", embedder))

    assert main(["--config", str(config), "consolidate"]) == 0

    output = capsys.readouterr().out
    assert "gave no usable answer for 1 batches" in output
    assert asyncio.run(statuses(tmp_path / "data", facts))[:2] == [FactStatus.ACTIVE] * 2
