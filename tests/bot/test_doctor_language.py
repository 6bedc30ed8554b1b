"""`mnemo doctor` warns when most stored facts are not English and the model is English-first."""

from __future__ import annotations

from pathlib import Path

from bot.config import Config
from bot.doctor.base import CheckStatus
from bot.doctor.storage import check_memory_language
from memory.embedding.languages import english_first, looks_english
from memory.records import NewFact
from memory.scope import Scope
from memory.store import Store
from tests.bot.core.harness import make_config

ALICE = Scope("console:alice", "console:room1")
GERMAN = [f"Ich wohne seit {n} Jahren in Hamburg" for n in range(15)]
ENGLISH = [f"I have lived in Leeds for {n} years" for n in range(10)]


async def _store_with(config: Config, texts: list[str]) -> None:
    store = await Store.open(config.storage.database_path)
    await store.write(
        lambda transaction: [transaction.facts.add(ALICE, NewFact(text)) for text in texts]
    )
    await store.aclose()


def _with_model(config: Config, model: str) -> Config:
    embedding = config.embedding.model_copy(update={"model": model})
    return config.model_copy(update={"embedding": embedding})


async def test_mostly_german_facts_with_minilm_name_the_setting(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    await _store_with(config, GERMAN + ENGLISH)
    result = await check_memory_language(config)
    assert result.status is CheckStatus.WARN
    assert "15 of 25 facts do not read as English" in result.detail
    assert 'embedding.model = "google/embeddinggemma-300m"' in result.detail
    assert "mnemo reconcile" in result.detail


async def test_a_multilingual_model_or_an_english_store_is_fine(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    await _store_with(config, GERMAN + ENGLISH)
    gemma = await check_memory_language(_with_model(config, "google/embeddinggemma-300m"))
    assert gemma.status is CheckStatus.OK
    english = make_config(tmp_path / "english")
    await _store_with(english, ENGLISH * 3 + GERMAN[:5])
    assert (await check_memory_language(english)).status is CheckStatus.OK


async def test_a_few_facts_say_nothing_and_no_database_is_skipped(tmp_path: Path) -> None:
    config = make_config(tmp_path / "data")
    assert (await check_memory_language(config)).status is CheckStatus.SKIP
    await _store_with(config, GERMAN[:5])
    result = await check_memory_language(config)
    assert result.status is CheckStatus.OK and "5 of 5" in result.detail


def test_which_models_are_english_first() -> None:
    assert english_first("sentence-transformers/all-MiniLM-L6-v2")
    assert english_first("BAAI/bge-small-en-v1.5")
    assert not english_first("sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2")
    assert not english_first("google/embeddinggemma-300m")
    assert not english_first("intfloat/multilingual-e5-large")


def test_what_reads_as_english() -> None:
    for text in ("My dog is called Max", "I play chess", "Likes tea and cake", "I'm 34"):
        assert looks_english(text), text
    for text in (
        "Mijn zus is arts",
        "Ich trinke keinen Kaffee mehr",
        "Mi piace cucinare",
        "Je n'ai plus de chien",
        "Я живу в Москве",
        "私は東京に住んでいます",
        "",
    ):
        assert not looks_english(text), text
