"""Forgetting for good, seen from outside: no byte left in the data folder, no word sent to
the model again, and no fact left behind by a message racing ``forget all confirm``."""

from __future__ import annotations

import asyncio
import re
import uuid

import pytest

from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    files_holding,
    indexed_ids,
    stored_facts,
    wait_until_learned,
)
from tests.faults.llm_stand_in import LLMStandIn

pytestmark = pytest.mark.faults

PEOPLE = 20
GAPS_MS = (0, 50, 500)


def unique_token() -> str:
    return f"PASS{uuid.uuid4().hex[:12].upper()}"


async def fact_number(bot: BotProcess, user: str, token: str) -> int:
    listing = await bot.say(user, "/memory list")
    match = re.search(rf"^#(\d+) .*{token}", listing, re.MULTILINE)
    assert match is not None, listing
    return int(match.group(1))


async def assert_gone_for_good(
    bot: BotProcess, settings: BotSettings, stand_in: LLMStandIn, token: str
) -> None:
    """No file under the data folder holds the token, and no later request to the model."""
    assert await files_holding(settings.data_dir, token) == []
    after = stand_in.mark()
    assert await bot.say("alice", "What do you remember about my secrets?") == "Noted."
    assert await bot.say("alice", "I like green tea.") == "Noted."
    await wait_until_learned(settings.data_dir)
    later = stand_in.since(after)
    assert later, "the model was not asked anything after the forget"
    assert not [call for call in later if token in call.prompt]
    assert await files_holding(settings.data_dir, token) == []


async def test_forget_one_fact_leaves_no_byte_and_no_word_for_the_model(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    token = unique_token()
    bot = await BotProcess.start(settings)
    assert await bot.say("alice", f"My passphrase is {token}.") == "Noted."
    assert await bot.say("alice", "I own a green kayak.") == "Noted."
    await wait_until_learned(settings.data_dir)
    assert await files_holding(settings.data_dir, token), "the token was never stored"
    number = await fact_number(bot, "alice", token)
    assert await bot.say("alice", f"/memory forget {number}") == f"Forgotten for good: #{number}."
    await assert_gone_for_good(bot, settings, stand_in, token)
    texts = [fact.text for fact in await stored_facts(settings.data_dir)]
    assert "I own a green kayak" in texts and "I like green tea" in texts
    assert await bot.stop() == 0
    assert await files_holding(settings.data_dir, token) == []


async def test_forget_all_leaves_no_byte_and_no_word_for_the_model(
    settings: BotSettings, stand_in: LLMStandIn
) -> None:
    token = unique_token()
    bot = await BotProcess.start(settings)
    assert await bot.say("alice", f"My passphrase is {token}.") == "Noted."
    assert await bot.say("alice", f"I wrote {token} on a note in my wallet.") == "Noted."
    assert await bot.say("bob", "I own a red kayak.") == "Noted."
    await wait_until_learned(settings.data_dir)
    ask = await bot.say("alice", "/memory forget all")
    assert ask.startswith("This erases all 2 facts"), ask
    done = await bot.say("alice", "/memory forget all confirm")
    assert done == "Done: I forgot all 2 facts about you here."
    await assert_gone_for_good(bot, settings, stand_in, token)
    assert await bot.stop() == 0
    assert await files_holding(settings.data_dir, token) == []
    owners = {fact.owner for fact in await stored_facts(settings.data_dir)}
    assert owners == {"test:alice", "test:bob"}


async def race(bot: BotProcess, user: str, gap_ms: int) -> tuple[str, str]:
    """The message, then ``forget all confirm`` ``gap_ms`` later, without waiting between."""
    message = await bot.send(user, f"My locker code is {user.upper()}-{gap_ms}.")
    await asyncio.sleep(gap_ms / 1000)
    confirm = await bot.send(user, "/memory forget all confirm")
    (reply,) = await bot.reply(message)
    (done,) = await bot.reply(confirm)
    return reply, done


@pytest.mark.parametrize("gap_ms", GAPS_MS)
async def test_forget_all_confirm_right_after_a_message_leaves_no_fact(
    settings: BotSettings, gap_ms: int
) -> None:
    bot = await BotProcess.start(settings)
    people = [f"p{number}" for number in range(PEOPLE)]
    for number, person in enumerate(people):
        assert await bot.say(person, f"My favourite number is {number}.") == "Noted."
    await wait_until_learned(settings.data_dir)
    for person in people:
        assert (await bot.say(person, "/memory forget all")).startswith("This erases the one fact")
    # Twenty people at once, each a message and the confirmation right behind it.
    outcomes = await asyncio.gather(*(race(bot, person, gap_ms) for person in people))
    for reply, done in outcomes:
        # Saved or (told so) not saved: either way it must not outlive the confirmation.
        assert reply.startswith("Noted."), reply
        assert done.startswith("Done: I forgot "), done
    await wait_until_learned(settings.data_dir)
    assert await bot.stop() == 0
    assert await stored_facts(settings.data_dir) == []
    assert await indexed_ids(settings.data_dir) == set()
