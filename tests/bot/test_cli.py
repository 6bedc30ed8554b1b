"""The ``mnemo`` command line, run in-process on a temporary data directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.main import main
from tests.conftest import LOCAL_MODEL_DIRECTORY
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
    for name in ("database", "embedding model", "vector index"):
        assert f"ok   {name}" in output
    assert "384 dimensions" in output


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
