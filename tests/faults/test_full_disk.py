"""A real full file system under the data folder: a small tmpfs, filled up while the bot runs.

Messages go on being sent until one cannot be stored: each person is told exactly when their
message was not saved (and it is then nowhere in the database), a saved one is learned. After
space is freed the database passes ``PRAGMA integrity_check`` and, once the bot has started
again, the index holds exactly the active facts. Needs root (mount); skipped otherwise.
"""

from __future__ import annotations

import asyncio
import errno
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    active_facts,
    indexed_ids,
    integrity,
    wait_until_learned,
)
from tests.faults.llm_stand_in import LLMStandIn
from tests.mounts import tmpfs

pytestmark = pytest.mark.faults

DISK_SIZE = "4m"
NOT_SAVED = "I could not save this message to my memory"
CHUNK = 4096
TRIES = 40


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", f"size={DISK_SIZE}") as mount_point:
        yield mount_point


def fill(path: Path) -> int:
    """Write ``path`` until the file system says it is full; the bytes written."""
    written = 0
    with path.open("wb", buffering=0) as filler:
        while True:
            try:
                filler.write(b"\xff" * CHUNK)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                return written
            written += CHUNK


def turn_texts(data_dir: Path) -> list[str]:
    uri = f"file:{quote(str(data_dir / 'mnemo.sqlite3'))}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        return [row[0] for row in connection.execute("SELECT text FROM messages")]


async def test_a_full_disk_is_told_and_nothing_is_broken_after(
    tmp_path: Path, small_disk: Path, stand_in: LLMStandIn
) -> None:
    settings = BotSettings(
        small_disk / "data",
        stand_in.base_url,
        # A write that failed for want of space is retried soon after space is back.
        extra={"MNEMO_SCHEDULER__PENDING_RETRY_INTERVAL_SECONDS": "5"},
        log_dir=tmp_path,
    )
    bot = await BotProcess.start(settings)
    assert await bot.say("alice", "My first bike was blue.") == "Noted."
    await wait_until_learned(settings.data_dir)
    filler = small_disk / "filler"
    assert await asyncio.to_thread(fill, filler) > 0
    told: list[str] = []
    saved: list[str] = []
    for number in range(TRIES):
        text = f"My bike number {number} is parked at dock {number}."
        reply = await bot.say("alice", text)
        assert reply.startswith("Noted."), reply
        (told if NOT_SAVED in reply else saved).append(text)
        if told:
            break
    assert told, f"{TRIES} messages were all saved: the disk never got full"
    stored = await asyncio.to_thread(turn_texts, settings.data_dir)
    assert not [text for text in told if text in stored], "told 'not saved', but it was"
    assert [text for text in saved if text not in stored] == []
    await asyncio.to_thread(filler.unlink)
    assert await bot.say("alice", "My new bike is red.") == "Noted."
    await wait_until_learned(settings.data_dir, within=300)
    assert await bot.stop() == 0
    assert await integrity(settings.data_dir) == "ok"
    learned = {fact.text for fact in await active_facts(settings.data_dir)}
    assert {text.rstrip(".") for text in saved} <= learned
    assert "My new bike is red" in learned
    assert not {text.rstrip(".") for text in told} & learned
    # A start brings the index in step with the database (writes it missed while full).
    bot = await BotProcess.start(settings)
    assert await bot.stop() == 0
    active = {fact.id for fact in await active_facts(settings.data_dir)}
    assert await indexed_ids(settings.data_dir) == active
