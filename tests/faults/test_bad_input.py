"""Hostile input through real processes: a clear answer, never a traceback, nothing changed.

Through the console (``mnemo chat`` with bytes piped in, as a terminal or a paste sends them)
and through the driver's core with the model over HTTP; the in-process versions are in
tests/bot/core/test_bad_input.py and tests/bot/test_data_folder.py.
"""

from __future__ import annotations

import pytest

from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    active_facts,
    learn_the_rest,
    run_mnemo,
    wait_until_learned,
)
from tests.faults.llm_stand_in import CallKind, LLMStandIn

pytestmark = pytest.mark.faults

HUGE = b"99999999999999999999"
CONSOLE_LINES = (
    b"I like caf\xe9 and \xff\xfe junk.",  # Latin-1 and stray bytes: not UTF-8
    b"My town is \xed\xa0\x80ville.",  # a surrogate encoded as UTF-8: not valid either
    b"/memory forget " + HUGE,
    b"/memory history " + HUGE,
    b"/memory list 9223372036854775808",
    b"/memory bogus",
    b"Is it raining?",
)


async def test_the_console_answers_every_bad_line_and_keeps_going(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    stdin = b"\n".join(CONSOLE_LINES) + b"\n"
    chat = await run_mnemo(settings, "chat", "--user", "alice", stdin=stdin)
    assert chat.code == 0, chat.stderr
    assert "Traceback" not in chat.stderr
    answers = [line for line in chat.stdout.splitlines() if line.startswith("Mnemo> ")]
    assert len(answers) == len(CONSOLE_LINES), chat.stdout
    assert answers[0] == answers[1] == answers[6] == "Mnemo> Noted."
    assert answers[2].startswith("Mnemo> There is no fact #99999999999999999999")
    assert answers[3].startswith("Mnemo> There is no fact #99999999999999999999")
    assert answers[4] in (
        "Mnemo> There are only 1 page(s) of facts.",
        "Mnemo> I don't remember anything about you here yet.",
    )
    assert answers[5].startswith("Mnemo> I don't know the command /memory bogus. Commands: ")
    await learn_the_rest(settings)
    learned = sorted(fact.text for fact in await active_facts(settings.data_dir))
    assert learned == [
        "I like caf\ufffd and \ufffd\ufffd junk",
        "My town is \ufffd\ufffd\ufffdville",
    ]
    for call in stand_in.recorded:
        call.prompt.encode("utf-8")


async def test_bad_input_through_the_core_and_the_model_over_http(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    bot = await BotProcess.start(settings)
    # JSON carries "\ud800" escapes as Matrix and Discord events can.
    assert await bot.say("al\udcffice", "My boat is called Sea\ud800Wolf.") == "Noted."
    forget = await bot.say("al\udcffice", "/memory forget " + "9" * 30)
    assert forget.startswith("There is no fact #")
    history = await bot.say("al\udcffice", "/memory history " + "9" * 30)
    assert history.startswith("There is no fact #")
    listing = await bot.say("al\udcffice", "/memory list 9223372036854775808")
    assert listing in (
        "There are only 1 page(s) of facts.",
        "I don't remember anything about you here yet.",
    )
    bogus = await bot.say("al\udcffice", "/memory bogus")
    assert bogus.startswith("I don't know the command /memory bogus. Commands: ")
    await wait_until_learned(settings.data_dir)
    assert await bot.stop() == 0
    facts = await active_facts(settings.data_dir)
    assert [(f.owner, f.text) for f in facts] == [
        ("test:al\ufffdice", "My boat is called Sea\ufffdWolf")
    ]
    assert stand_in.since(0, CallKind.EXTRACTION)
    assert all("Sea\ufffdWolf" in call.prompt for call in stand_in.since(0, CallKind.REPLY))


async def test_lone_surrogates_in_the_models_answers(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    """The model answers "\\ud800" escapes in its reply and in the facts it extracts."""
    stand_in.suffix = "\ud800"
    chat = await run_mnemo(settings, "chat", stdin=b"My boat is called Seawolf.\nWhat is new?\n")
    assert chat.code == 0, chat.stderr
    assert "Traceback" not in chat.stderr
    assert "Mnemo> Noted.\ufffd\nMnemo> Noted.\ufffd\n" in chat.stdout
    await learn_the_rest(settings)
    learned = [fact.text for fact in await active_facts(settings.data_dir)]
    assert learned == ["My boat is called Seawolf\ufffd"]


@pytest.mark.parametrize("where", ["a file", "a read-only mount"])
async def test_an_unusable_data_folder_is_one_line_and_exit_2_everywhere(
    settings: BotSettings, where: str, request: pytest.FixtureRequest
) -> None:
    if where == "a file":
        settings.data_dir.write_text("in the way")
        data_dir = settings.data_dir
        reason = "a file is in the way"
    else:
        data_dir = request.getfixturevalue("read_only_mount") / "data"
        reason = "it is on a read-only file system"
    unusable = BotSettings(data_dir, settings.llm_url)
    # The other commands go through the same helper: tests/bot/test_data_folder.py.
    for command in (("chat",), ("reconcile",)):
        finished = await run_mnemo(unusable, *command, stdin=b"hello\n")
        assert finished.code == 2, finished
        lines = finished.stderr.strip().splitlines()
        assert len(lines) == 1, finished.stderr
        assert lines[0].startswith(f"error: storage.data_dir ({data_dir}) cannot be used: {reason}")
        assert ". Fix: " in lines[0] and "MNEMO_STORAGE__DATA_DIR" in lines[0]
    doctor = await run_mnemo(unusable, "doctor")
    assert doctor.code == 2, doctor
    assert f"FAIL data folder: storage.data_dir ({data_dir}) cannot be used: {reason}" in (
        doctor.stdout
    )
    assert "the check itself failed" not in doctor.stdout
    assert "Traceback" not in doctor.stdout + doctor.stderr
