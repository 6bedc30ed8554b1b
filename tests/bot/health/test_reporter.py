"""The status a running application writes: the real core, its queue worker, SQLite."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

from bot.config import LoggingSettings
from bot.health.reporter import StatusReporter, reporting_status
from bot.health.status import STALL_SECONDS, problem, read_status
from bot.messages import IncomingMessage
from memory.embedding import Embedder
from tests.bot.core.harness import fact, make_config, open_harness
from tests.memory.write.gated import is_extraction, until

CAT = "I have a cat named Miso."


async def test_the_status_follows_the_queue_from_waiting_to_applied(
    tmp_path: Path, embedder: Embedder
) -> None:
    clock = [time.time()]
    harness = await open_harness(tmp_path, embedder, held=is_extraction)
    try:
        await harness.app.start()
        reporter = StatusReporter(
            tmp_path / "status.json", harness.app, lambda: True, clock=lambda: clock[0]
        )
        idle = await reporter.snapshot()
        assert (idle.worker_running, idle.oldest_due_seconds) == (True, None)
        assert problem(idle, clock[0]) is None

        # The model hangs on the extraction: the message stays queued.
        harness.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
        await harness.app.core.handle(direct_message(CAT))
        await until(lambda: bool(harness.llm.waiting))
        clock[0] += STALL_SECONDS + 60
        stuck = await reporter.snapshot()
        assert stuck.oldest_due_seconds is not None
        assert stuck.oldest_due_seconds > STALL_SECONDS
        assert stuck.last_applied_seconds is None
        assert "the write queue stands still" in (problem(stuck, clock[0]) or "")

        harness.llm.open()
        await harness.app.writer.drain()
        moved = await reporter.snapshot()
        assert moved.oldest_due_seconds is None
        assert moved.last_applied_seconds == 0.0
        assert problem(moved, clock[0]) is None
    finally:
        harness.llm.open()
        await harness.app.aclose()


def direct_message(text: str) -> IncomingMessage:
    return IncomingMessage(
        platform="matrix",
        user_key="matrix:alice",
        display_name="Alice",
        room_key="matrix:dm",
        text=text,
        time=datetime.now(UTC),
        is_direct=True,
        mentions_bot=False,
    )


async def test_the_file_is_kept_while_running_and_removed_after(
    tmp_path: Path, embedder: Embedder
) -> None:
    path = tmp_path / "run" / "status.json"
    base = make_config(tmp_path / "data")
    config = base.model_copy(update={"logging": LoggingSettings(status_file=path)})
    harness = await open_harness(tmp_path, embedder, config=config)
    try:
        await harness.app.start()
        async with reporting_status(harness.app, lambda: False):
            await until(path.exists)
            status = read_status(path)
            assert status.connected is False
            assert problem(status, time.time()) == "not connected to the chat server"
        assert not path.exists()
    finally:
        await harness.app.aclose()
