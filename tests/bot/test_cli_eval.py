"""``mnemo eval retrieval`` and ``mnemo calibrate``, run in-process with the real model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from adapters.main import main
from bot.components import build_reranker, recall_settings
from bot.config import EmbeddingSettings, MemorySettings
from memory.recall import FastEmbedReranker
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.evaluation.tiny_locomo import TINY_LOCOMO


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    path = tmp_path / "mnemo.toml"
    model_path = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    # A reranker directory that does not exist: loading fails at once, as offline.
    path.write_text(
        f'[storage]\ndata_dir = "data"\n[embedding]\n{model_path}\n'
        '[memory]\nreranker_model_path = "no-reranker-here"\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def tiny_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(TINY_LOCOMO), encoding="utf-8")
    return path


def _flat(text: str) -> str:
    """Rich wraps lines at the terminal width; compare text with the wrapping undone."""
    return " ".join(text.split())


def test_eval_prints_every_mode_and_writes_json(
    config_file: Path, tiny_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "numbers.json"
    arguments = ["eval", "retrieval", "--dataset", "locomo", str(tiny_dataset), "--json", str(out)]
    assert main(["--config", str(config_file), *arguments]) == 0
    printed = _flat(capsys.readouterr().out)
    assert "1 conversations, 5 questions" in printed
    assert "hybrid (dense + full-text) / speaker scope" in printed
    assert "explicit lookup used cosine order (reranker unavailable:" in printed
    numbers = json.loads(out.read_text(encoding="utf-8"))
    assert numbers["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert numbers["reranked"] is False
    assert len(numbers["modes"]) == 6
    scoped = numbers["modes"]["passive (dense) / speaker scope"]
    assert scoped["overall"]["hit@1"] == pytest.approx(0.8)
    assert scoped["by_category"]["3 open-domain"]["hit@50"] == 0.0
    joint = numbers["modes"]["passive (dense)"]["overall"]
    assert joint["hit@5"] == 1.0 and joint["questions"] == 5


def test_eval_mode_selection(
    config_file: Path, tiny_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "numbers.json"
    arguments = [
        *("eval", "retrieval", "--dataset", "locomo", str(tiny_dataset)),
        *("--modes", "passive", "--scope", "speaker", "--json", str(out)),
    ]
    assert main(["--config", str(config_file), *arguments]) == 0
    numbers = json.loads(out.read_text(encoding="utf-8"))
    assert list(numbers["modes"]) == ["passive (dense) / speaker scope"]
    assert numbers["notes"] == []


def test_eval_bad_dataset_is_one_clear_line(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"not": "a list"}', encoding="utf-8")
    arguments = ["eval", "retrieval", "--dataset", "locomo", str(broken)]
    assert main(["--config", str(config_file), *arguments]) == 2
    error = _flat(capsys.readouterr().err)
    assert "dataset error:" in error and "expected a list of conversations" in error
    assert "Traceback" not in error


def test_calibrate_shipped_pairs_with_plot(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "calibration.png"
    assert main(["--config", str(config_file), "calibrate", "--plot", str(png)]) == 0
    printed = _flat(capsys.readouterr().out)
    assert "138 pairs from" in printed and "de, en, es, fr, it, ja, nl, pt, ru, zh" in printed
    for group in ("same", "update", "detail", "different", "negation", "unrelated"):
        assert f"│ {group} " in printed
    assert "recommended memory.candidate_threshold = 0.30" in printed
    assert "no threshold separates unrelated pairs from the others" in printed
    assert "same (NONE (duplicate)) and update (UPDATE) overlap" in printed
    assert "configured memory.candidate_threshold = 0.30: 0 pairs" in printed
    # English-first: each language separates alone, but Portuguese and Chinese do not.
    assert "│ zh │ 7 │ 0.61 │ 0.68 │ NO" in printed and "│ de │ 8 │ 0.75 │ 0.45 │ yes" in printed
    with Image.open(png) as image:
        assert image.format == "PNG" and image.width == 900


def test_calibrate_bad_pairs_file(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("group,language,first,second\nsimilar,en,a,b\n", encoding="utf-8")
    assert main(["--config", str(config_file), "calibrate", str(pairs)]) == 2
    error = _flat(capsys.readouterr().err)
    assert "line 2: unknown group 'similar'" in error


def test_recall_settings_and_reranker_come_from_the_config() -> None:
    memory = MemorySettings(recall_top_k=4, lookup_pool=20, hybrid_retrieval=True)
    settings = recall_settings(memory)
    assert (settings.top_k, settings.lookup_pool, settings.hybrid) == (4, 20, True)
    assert settings.lookup_min_similarity == memory.lookup_min_similarity
    reranker = build_reranker(memory, EmbeddingSettings())
    assert isinstance(reranker, FastEmbedReranker)
    assert reranker.model_name == "Xenova/ms-marco-MiniLM-L-6-v2"
    assert build_reranker(MemorySettings(reranker_model=""), EmbeddingSettings()) is None


def test_eval_memory_with_the_reference_model_prints_tables_and_json(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "memory.json"
    arguments = ["eval", "memory", "--reference", "--kinds", "question", "update_age"]
    assert main(["--config", str(config_file), *arguments, "--json", str(out)]) == 0
    printed = _flat(capsys.readouterr().out)
    assert "10 conversations, model reference (the dataset's labels)" in printed
    assert "by case kind" in printed and "update_age" in printed and "model calls" in printed
    assert "facts kept in English from another language: none" in printed
    numbers = json.loads(out.read_text(encoding="utf-8"))
    assert numbers["overall"]["accuracy"] == 1.0
    assert set(numbers["by_kind"]) == {"question", "update_age"}
    assert numbers["overall"]["messages"] == 15
    # The six messages that only ask something cost no call.
    assert numbers["latency"]["extraction"]["calls"] == 9


def test_eval_memory_against_a_server_that_is_not_there_says_so(
    config_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config_file.write_text(
        config_file.read_text(encoding="utf-8")
        + '[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n',
        encoding="utf-8",
    )
    arguments = ["--config", str(config_file), "eval", "memory", "--kinds", "new", "--limit", "1"]
    assert main(arguments) == 1
    assert "the language model failed" in _flat(capsys.readouterr().err)


def test_eval_memory_names_a_broken_dataset(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "cases.json"
    broken.write_text("{", encoding="utf-8")
    arguments = ["eval", "memory", "--reference", "--dataset", str(broken)]
    assert main(["--config", str(config_file), *arguments]) == 2
    assert "dataset error" in _flat(capsys.readouterr().err)
