"""Broken index files: zeroed, overwritten with random bytes, or deleted, while the bot runs
and while it is stopped. The bot keeps answering, rebuilds the index from SQLite (the
truth), and recall works again."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    active_facts,
    indexed_ids,
    wait_until_learned,
)
from tests.faults.llm_stand_in import CallKind, LLMStandIn

pytestmark = pytest.mark.faults

FOUND = "#1 My kayak is bright green"
REBUILT = "vector index rebuilt from the database"


def zero(index: Path) -> None:
    for path in index.rglob("*"):
        if path.is_file():
            path.write_bytes(bytes(path.stat().st_size))


def random_bytes(index: Path) -> None:
    for path in index.rglob("*"):
        if path.is_file():
            path.write_bytes(os.urandom(max(path.stat().st_size, 64)))


def delete(index: Path) -> None:
    shutil.rmtree(index)


BREAKS: dict[str, Callable[[Path], None]] = {
    "zeroed": zero,
    "random bytes": random_bytes,
    "deleted": delete,
}


async def search_until_found(bot: BotProcess, *, within: float = 90.0) -> str:
    """``/memory search kayak`` until the fact is found again (the rebuild runs behind)."""
    async with asyncio.timeout(within):
        while True:
            answer = await bot.say("alice", "/memory search kayak")
            if FOUND in answer:
                return answer
            await asyncio.sleep(0.5)


async def learn_the_kayak(bot: BotProcess, settings: BotSettings) -> None:
    assert await bot.say("alice", "My kayak is bright green.") == "Noted."
    await wait_until_learned(settings.data_dir)
    # The index is written right after the database's commit: found a moment later.
    await search_until_found(bot)


async def assert_in_step(settings: BotSettings) -> None:
    active = {fact.id for fact in await active_facts(settings.data_dir)}
    assert await indexed_ids(settings.data_dir) == active


@pytest.mark.parametrize("damage", BREAKS)
async def test_index_broken_while_running_is_rebuilt_and_recall_works_again(
    settings: BotSettings, stand_in: LLMStandIn, damage: str
) -> None:
    bot = await BotProcess.start(settings)
    await learn_the_kayak(bot, settings)
    await asyncio.to_thread(BREAKS[damage], settings.data_dir / "index")
    # Replies go on meanwhile, with or without memories.
    assert await bot.say("alice", "What colour is my kayak?") == "Noted."
    # A search or the next index write meets the broken files and has them rebuilt.
    assert await bot.say("alice", "I store my kayak in the garage.") == "Noted."
    await wait_until_learned(settings.data_dir)
    await bot.logged(REBUILT, within=120)
    await search_until_found(bot)
    mark = stand_in.mark()
    assert await bot.say("alice", "Where should I paddle my kayak today?") == "Noted."
    (reply_call,) = stand_in.since(mark, CallKind.REPLY)
    assert "My kayak is bright green" in reply_call.prompt
    assert await bot.stop() == 0
    await assert_in_step(settings)
    assert not list(settings.data_dir.glob("*broken*")), "a moved-aside copy was left behind"


@pytest.mark.parametrize("damage", BREAKS)
async def test_index_broken_while_stopped_is_rebuilt_at_start(
    settings: BotSettings, damage: str
) -> None:
    bot = await BotProcess.start(settings)
    await learn_the_kayak(bot, settings)
    assert await bot.stop() == 0
    await asyncio.to_thread(BREAKS[damage], settings.data_dir / "index")
    bot = await BotProcess.start(settings)
    assert await bot.say("alice", "Hello again.") == "Noted."
    await search_until_found(bot)
    assert await bot.stop() == 0
    await assert_in_step(settings)
