"""Fixtures of the fault suite: the model stand-in and the settings of the bot processes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.faults.bot_process import BotProcess, BotSettings
from tests.faults.llm_stand_in import LLMStandIn


@pytest.fixture
def stand_in() -> Iterator[LLMStandIn]:
    with LLMStandIn() as server:
        yield server


@pytest.fixture(autouse=True)
async def no_process_left() -> AsyncIterator[None]:
    """A test that failed half-way leaves no bot process running (nor its log open)."""
    yield
    for bot in list(BotProcess.running):
        await bot.kill()


@pytest.fixture
def settings(tmp_path: Path, stand_in: LLMStandIn) -> BotSettings:
    return BotSettings(data_dir=tmp_path / "data", llm_url=stand_in.base_url)
