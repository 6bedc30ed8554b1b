"""Hostile input through the core: a clear answer, never a traceback, nothing changed.

The same inputs through a real ``mnemo chat`` process and an LLM over HTTP are in
tests/faults/test_bad_input.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.messages import IncomingMessage, OutgoingMessage
from memory.embedding import Embedder
from memory.records import NewFact
from memory.scope import Scope
from memory.store import StoreTransaction
from memory.text import valid_data, valid_text
from tests.bot.core.harness import START, Harness, make_config, open_harness, reply_calls

HUGE = "99999999999999999999"
ALICE = Scope("matrix:alice", "matrix:dm")


def add_facts(transaction: StoreTransaction) -> None:
    for number in range(1, 4):
        transaction.facts.add(ALICE, NewFact(f"fact number {number}"))


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    await harness.app.store.write(add_facts)
    yield harness
    await harness.app.aclose()


async def active_texts(bot: Harness) -> list[str]:
    facts = await bot.app.store.read(
        lambda transaction: transaction.facts.list_in_scope(ALICE, limit=100)
    )
    return [fact.text for fact in facts]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (f"!memory forget {HUGE}", f"There is no fact #{HUGE}: fact numbers are those in the list"),
        (f"!memory forget #{HUGE}", f"There is no fact #{HUGE}"),
        (f"!memory history {HUGE}", f"There is no fact #{HUGE}"),
        (f"!memory forget {'9' * 3990}", "There is no fact #999"),
        ("!memory forget 2147483647", "I have no fact #2147483647 about you"),
        ("!memory history 2147483647", "I have no fact #2147483647 about you"),
        ("!memory forget 2147483648", "There is no fact #2147483648: fact numbers are those"),
        ("!memory history 9223372036854775808", "There is no fact #9223372036854775808"),
        ("!memory list 9223372036854775808", "There are only 1 page(s) of facts."),
        (f"!memory list {HUGE}", "There are only 1 page(s) of facts."),
        (f"!memory list {'9' * 3990}", "There are only 1 page(s) of facts."),
        ("!memory list 9223372036854775807", "There are only 1 page(s) of facts."),
        ("!memory list 000000000000000000000001", "What I remember about you here (3 facts"),
        ("!memory forget 0", "I have no fact #0 about you here."),
        ("!memory list 0000", "The page must be a number from 1."),
    ],
)
async def test_numbers_of_any_size_get_an_answer_and_change_nothing(
    bot: Harness, command: str, expected: str
) -> None:
    before = await active_texts(bot)
    replies = await bot.send("alice", command)
    assert len(replies) == 1
    assert replies[0].text.startswith(expected), replies[0].text
    assert await active_texts(bot) == before
    assert bot.llm.calls == []


async def test_unknown_sub_command_lists_only_commands_that_exist(bot: Harness) -> None:
    reply = await bot.say("alice", "/memory bogus")
    assert reply.startswith("I don't know the command /memory bogus. Commands: ")
    suggested = reply.split("Commands: ", 1)[1].rstrip(".").split(", ")
    assert len(suggested) >= 8
    for typed in suggested:
        answer = await bot.say("alice", typed)
        assert not answer.startswith("I don't know the command"), (typed, answer)


async def test_help_lists_only_commands_that_exist(bot: Harness) -> None:
    for help_command in ("/help", "/memory help"):
        lines = (await bot.say("alice", help_command)).splitlines()
        for line in lines:
            if not line.startswith("/"):
                continue
            usage = line.split(" - ", 1)[0]
            for alternative in usage.split(" | "):
                typed = alternative.split(" <", 1)[0].split(" [", 1)[0]
                answer = await bot.say("alice", typed)
                assert not answer.startswith("I don't know the command"), (typed, answer)


def test_a_lone_surrogate_is_made_valid_where_a_message_enters() -> None:
    message = IncomingMessage(
        platform="matrix",
        user_key="matrix:@al\udcffice:example.org",
        display_name="Al\ud800ice",
        room_key="matrix:dm",
        text="I like caf\udce9 \ud83d\ude00 and tea\udfff",
        time=START,
        is_direct=True,
        message_id="$event\udc80",
    )
    assert message.text == "I like caf\ufffd \U0001f600 and tea\ufffd"
    assert message.display_name == "Al\ufffdice"
    assert message.user_key == "matrix:@al\ufffdice:example.org"
    assert message.message_id == "$event\ufffd"
    reply = OutgoingMessage("an answer with \udc80 in it", "matrix:dm")
    assert reply.text == "an answer with \ufffd in it"
    assert valid_text("plain ascii") == "plain ascii"
    assert valid_data({"q\udc80": ["a\ud800", 3, None]}) == {"q\ufffd": ["a\ufffd", 3, None]}


async def test_lone_surrogates_reach_no_layer_below_the_core(bot: Harness) -> None:
    bot.mind.replies.append("Noted.")
    replies = await bot.send("alice", "I ride a bike to caf\udce9 Gr\ud800n every day")
    assert [reply.text for reply in replies] == ["Noted."]
    prompt = reply_calls(bot.llm)[-1].prompt_text
    assert "caf\ufffd Gr\ufffdn" in prompt
    prompt.encode("utf-8")
    turns = await bot.app.store.read(
        lambda transaction: transaction.turns.recent("matrix:dm", limit=10)
    )
    assert any("caf\ufffd Gr\ufffdn" in turn.text for turn in turns)
