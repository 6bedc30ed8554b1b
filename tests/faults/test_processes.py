"""One process per data folder: a second one is refused in one line, the first loses nothing."""

from __future__ import annotations

import pytest

from bot.data_folder import LOCK_FILE_NAME
from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    active_facts,
    run_mnemo,
    wait_until_learned,
)
from tests.faults.llm_stand_in import LLMStandIn

pytestmark = pytest.mark.faults

# Every writing command takes the lock through one helper (tests/bot/test_data_folder.py
# checks which do); two real ones here.
WRITING_COMMANDS = (("chat",), ("reconcile",))


async def test_a_second_process_is_refused_and_the_first_loses_nothing(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    bot = await BotProcess.start(settings)
    sent = ["I collect stamps from Chile."]
    assert await bot.say("alice", sent[0]) == "Noted."
    for number, command in enumerate(WRITING_COMMANDS):
        # The first keeps talking while the second one tries to start.
        in_flight = await bot.send("alice", f"I visited {number + 3} lighthouses.")
        sent.append(f"I visited {number + 3} lighthouses.")
        second = await run_mnemo(settings, *command, stdin=b"I am the second process.\n")
        assert second.code == 2, second
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert lines[0] == (
            f"error: storage.data_dir ({settings.data_dir}) is in use by another Mnemo "
            f"process (PID {bot.pid}). Stop that process first, or use a read-only command "
            "beside it (mnemo doctor)."
        )
        assert "second process" not in second.stdout
        assert await bot.reply(in_flight) == ["Noted."]
    doctor = await run_mnemo(settings, "doctor")
    assert f"ok   data folder: {settings.data_dir} (in use by Mnemo (PID {bot.pid}))" in (
        doctor.stdout
    )
    assert "ok   database" in doctor.stdout and "FAIL" not in doctor.stdout, doctor.stdout
    sent.append("I own a red canoe.")
    assert await bot.say("alice", sent[-1]) == "Noted."
    await wait_until_learned(settings.data_dir)
    assert await bot.stop() == 0
    learned = sorted(fact.text for fact in await active_facts(settings.data_dir))
    assert learned == sorted(text.rstrip(".") for text in sent)
    assert not any("second process" in r.prompt for r in stand_in.recorded)


async def test_the_lock_of_a_killed_process_does_not_block_the_next(
    settings: BotSettings,
) -> None:
    first = await BotProcess.start(settings)
    await first.kill()
    # The kernel dropped the lock with the process; its PID is still in the file.
    assert (settings.data_dir / LOCK_FILE_NAME).read_text() == f"{first.pid}\n"
    second = await BotProcess.start(settings)
    assert await second.say("bob", "I play the oboe.") == "Noted."
    await wait_until_learned(settings.data_dir)
    assert await second.stop() == 0
    reconcile = await run_mnemo(settings, "reconcile")
    assert reconcile.code == 0, reconcile.stderr
    assert [fact.text for fact in await active_facts(settings.data_dir)] == ["I play the oboe"]
