"""Config: TOML plus environment, and one clear line per mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Config, ConfigError, load_config
from memory.embedding.prompts import EMBEDDINGGEMMA, NO_PROMPTS, Prompts
from memory.scope import ScopeMode

REPOSITORY_ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mnemo.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(environ={}) == Config()


def test_example_file_is_valid_and_complete() -> None:
    config = load_config(REPOSITORY_ROOT / "mnemo.example.toml", environ={})
    assert config.memory.scope_mode is ScopeMode.USER_ROOM
    # Every section of the model is documented in the example.
    text = (REPOSITORY_ROOT / "mnemo.example.toml").read_text(encoding="utf-8")
    for section in Config.model_fields:
        assert f"[{section}]" in text


def test_file_values_and_relative_paths(tmp_path: Path) -> None:
    path = write(tmp_path, '[storage]\ndata_dir = "state"\n[memory]\nscope_mode = "user"\n')
    config = load_config(path, environ={})
    assert config.storage.data_dir == tmp_path / "state"
    assert config.memory.scope_mode is ScopeMode.USER


def test_environment_overrides_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, '[llm]\nmodel = "from-file"\n')
    config = load_config(
        path, environ={"MNEMO_LLM__MODEL": "from-env", "MNEMO_MEMORY__RECALL_TOP_K": "9"}
    )
    assert (config.llm.model, config.memory.recall_top_k) == ("from-env", 9)


def test_wrong_value_names_the_key_and_expectation(tmp_path: Path) -> None:
    path = write(tmp_path, '[memory]\ncandidate_threshold = 7\n[embedding]\nbackend = "word2vec"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ={})
    lines = str(caught.value).splitlines()
    assert len(lines) == 2
    assert any(line.startswith("memory.candidate_threshold:") and "7" in line for line in lines)
    assert any(line.startswith("embedding.backend:") and "'fastembed'" in line for line in lines)


def test_unknown_key_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "[memory]\ncandidate_treshold = 0.5\n")
    with pytest.raises(ConfigError, match=r"^memory\.candidate_treshold: unknown setting"):
        load_config(path, environ={})


def test_environment_value_is_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^memory\.recall_top_k:.*'many'"):
        load_config(write(tmp_path, ""), environ={"MNEMO_MEMORY__RECALL_TOP_K": "many"})


def test_missing_named_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"not found: copy mnemo\.example\.toml"):
        load_config(tmp_path / "nope.toml", environ={})
    with pytest.raises(ConfigError, match="not found"):
        load_config(environ={"MNEMO_CONFIG": str(tmp_path / "nope.toml")})


def test_broken_toml_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML") as caught:
        load_config(write(tmp_path, "[memory\n"), environ={})
    assert "\n" not in str(caught.value)


def test_settings_are_frozen() -> None:
    config = Config()
    with pytest.raises(Exception, match="frozen"):
        config.memory.recall_top_k = 3  # type: ignore[misc]


def test_environment_list_settings_are_comma_separated(tmp_path: Path) -> None:
    config = load_config(
        write(tmp_path, '[matrix]\nallowed_users = ["@file:example.org"]\n'),
        environ={
            "MNEMO_MATRIX__ALLOWED_USERS": "@alice:example.org, @*:home.example ,",
            "MNEMO_DISCORD__ALLOWED_CHANNELS": "123",
            "MNEMO_DISCORD__ALLOWED_ROLES": "",
        },
    )
    assert config.matrix.allowed_users == ("@alice:example.org", "@*:home.example")
    assert config.discord.allowed_channels == ("123",)
    assert config.discord.allowed_roles == ()


def test_environment_strings_are_not_split_for_plain_settings(tmp_path: Path) -> None:
    # A comma in a plain string setting (a model tag, a URL) stays as it is.
    config = load_config(write(tmp_path, ""), environ={"MNEMO_LLM__MODEL": "a,b"})
    assert config.llm.model == "a,b"


def test_embedding_prompts_are_the_models_unless_set(tmp_path: Path) -> None:
    gemma = '[embedding]\nmodel = "google/embeddinggemma-300m"\n'
    config = load_config(write(tmp_path, gemma), environ={})
    assert config.embedding.prompts() == EMBEDDINGGEMMA
    assert load_config(environ={}).embedding.prompts() == NO_PROMPTS
    custom = load_config(
        write(tmp_path, gemma + 'document_prompt = "passage: "\n'),
        environ={"MNEMO_EMBEDDING__QUERY_PROMPT": ""},
    ).embedding.prompts()
    assert custom == Prompts("", "passage: ", EMBEDDINGGEMMA.similarity)


def test_the_candidate_threshold_follows_the_embedding_model(tmp_path: Path) -> None:
    gemma = '[embedding]\nmodel = "google/embeddinggemma-300m"\n'
    assert load_config(write(tmp_path, gemma), environ={}).memory.candidate_threshold == 0.48
    assert load_config(environ={}).memory.candidate_threshold == 0.30
    unknown = '[embedding]\nmodel = "BAAI/bge-small-en-v1.5"\n'
    assert load_config(write(tmp_path, unknown), environ={}).memory.candidate_threshold == 0.30
    chosen = load_config(
        write(tmp_path, gemma), environ={"MNEMO_MEMORY__CANDIDATE_THRESHOLD": "0.42"}
    )
    assert chosen.memory.candidate_threshold == 0.42
    by_environment = load_config(
        write(tmp_path, ""), environ={"MNEMO_EMBEDDING__MODEL": "embeddinggemma:300m"}
    )
    assert by_environment.memory.candidate_threshold == 0.48
