"""A running bot, and one starting up, keep answering while a broken index is rebuilt."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from adapters.main import main
from bot.config import Config
from bot.scheduler import RECONCILE
from memory.embedding import Embedder, TextKind, Vectors
from memory.index import HealingIndex
from tests.bot.core.harness import Harness, fact, make_config, open_harness, reply_calls
from tests.conftest import LOCAL_MODEL_DIRECTORY
from tests.memory.index_damage import damage, moved_aside_copies

CAT = "- Alice has a cat named Miso"


async def _tell_about_the_cat(bot: Harness) -> None:
    bot.mind.facts["I have a cat named Miso."] = [fact("I have a cat named Miso", "possession")]
    await bot.say("alice", "I have a cat named Miso.")


async def _cat_is_recalled(bot: Harness) -> bool:
    await bot.say("alice", "What's my cat called?")
    return CAT in reply_calls(bot.llm)[-1].messages[0].content


def _index_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name == "memory.index.healing"
    ]


def healing(bot: Harness) -> HealingIndex:
    """SQLite's index is the self-healing LanceDB one (PostgreSQL's needs no healing)."""
    index = bot.app.index
    assert isinstance(index, HealingIndex)
    return index


async def test_the_index_folder_deleted_while_the_bot_runs(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    try:
        await _tell_about_the_cat(bot)
        assert await _cat_is_recalled(bot)
        damage(bot.app.config.storage.index_path, "deleted")

        await _cat_is_recalled(bot)  # answered, with or without the memory
        assert await bot.app.scheduler.run_now(RECONCILE) is not None
        await healing(bot).wait_rebuilt()

        assert await _cat_is_recalled(bot)
        assert len(_index_warnings(caplog)) == 1
    finally:
        await bot.app.aclose()


@pytest.mark.parametrize("how", ["zeroed", "random bytes"])
async def test_a_bot_starting_on_a_broken_index_answers_and_rebuilds_it(
    tmp_path: Path, embedder: Embedder, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = make_config(tmp_path / "data")
    first = await open_harness(tmp_path, embedder, config=config)
    await _tell_about_the_cat(first)
    await first.app.aclose()
    damage(config.storage.index_path, how)

    bot = await open_harness(tmp_path, embedder, config=config)
    try:
        await healing(bot).wait_rebuilt()
        assert await _cat_is_recalled(bot)
        assert moved_aside_copies(config.storage.index_path) == []
        (warning,) = _index_warnings(caplog)
        assert "unreadable" in warning
    finally:
        await bot.app.aclose()


def _config_file(tmp_path: Path, data_dir: Path) -> Path:
    model = f'model_path = "{LOCAL_MODEL_DIRECTORY}"' if LOCAL_MODEL_DIRECTORY.is_dir() else ""
    path = tmp_path / "mnemo.toml"
    path.write_text(f'[storage]\ndata_dir = "{data_dir}"\n[embedding]\n{model}\n', "utf-8")
    return path


async def _remember_the_cat(tmp_path: Path, embedder: Embedder, config: Config) -> None:
    bot = await open_harness(tmp_path, embedder, config=config)
    await _tell_about_the_cat(bot)
    await bot.app.aclose()


def test_mnemo_reconcile_repairs_a_zeroed_index_instead_of_dying(
    tmp_path: Path,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = make_config(tmp_path / "data")
    asyncio.run(_remember_the_cat(tmp_path, embedder, config))
    damage(config.storage.index_path, "zeroed")
    monkeypatch.delenv("MNEMO_CONFIG", raising=False)
    config_file = _config_file(tmp_path, config.storage.data_dir)

    assert main(["--config", str(config_file), "reconcile", "--dry-run"]) == 1
    dry = capsys.readouterr()
    assert "mnemo reconcile" in dry.err and "Traceback" not in dry.err

    assert main(["--config", str(config_file), "reconcile"]) == 0
    output = capsys.readouterr().out
    assert "rebuilt the unreadable vector index" in output
    assert "repaired: 1 missing" in output
    assert main(["--config", str(config_file), "reconcile", "--dry-run"]) == 0
    assert "would repair: 0 missing, 0 stale, 0 re-embedded" in capsys.readouterr().out


class HeldEmbedder:
    """The real embedder, but a call that embeds ``held_text`` waits while ``hold`` is
    clear (test double for a slow rebuild: the refill embeds every stored fact)."""

    def __init__(self, inner: Embedder, held_text: str) -> None:
        self.inner = inner
        self.held_text = held_text
        self.released = asyncio.Event()
        self.released.set()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        if self.held_text in texts:
            await self.released.wait()
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


def _core_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "bot.core.core" and r.levelno >= logging.WARNING]


async def test_a_rebuild_is_said_once_in_the_log_not_on_every_message(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    held = HeldEmbedder(embedder, "I have a cat named Miso")
    bot = await open_harness(tmp_path, held)
    try:
        await _tell_about_the_cat(bot)
        assert await _cat_is_recalled(bot)
        for rebuild in (1, 2):
            held.released.clear()
            damage(bot.app.config.storage.index_path, "deleted")
            # What the scheduled reconcile does first (which then waits for the rebuild).
            assert await healing(bot).heal_if_broken()
            assert healing(bot).rebuilding
            for _ in range(3):
                assert not await _cat_is_recalled(bot)  # answered, without the memory
            held.released.set()
            await healing(bot).wait_rebuilt()
            assert await _cat_is_recalled(bot)
            records = _core_records(caplog)
            assert [r.levelno for r in records] == [logging.WARNING] * rebuild, records
            assert "until the index is rebuilt" in records[-1].getMessage()
    finally:
        held.released.set()
        await bot.app.aclose()
