"""kill -9 at random moments: no message lost, none learned twice, the index equal to SQLite.

Each round starts the real bot on the same data folder, sends messages, and kills it with
SIGKILL at one of the moments the write path is most fragile: while the model writes the
reply, while it extracts facts, while it decides about similar facts, while the vector
index is written (the driver announces each index write; the kill follows 0-30 ms later),
or after a random delay. The model stand-in holds the call of that kind until the kill, so
the moment is exact. After the last round the bot runs once more without faults, learns
what was left queued, and is stopped; then the data folder is read from outside.

Both write paths: the combined call (the default: a message that resembles known facts is
extracted and decided in one call, which a round then holds) and the two-step one
(``memory.decide_in_extraction = false``: an extraction call, then a decision call).

A message counts as handed to the core once its reply call reached the model: the intake
writes it ahead of that call. A message killed earlier (still in the pipe, or inside the
intake's own transaction) may be learned or not, but never twice.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from dataclasses import dataclass

import pytest

from tests.faults.bot_process import (
    BotProcess,
    BotSettings,
    active_facts,
    indexed_ids,
    stored_facts,
    wait_until_learned,
)
from tests.faults.llm_stand_in import CallKind, LLMStandIn

pytestmark = pytest.mark.faults

HELD = {
    "reply": CallKind.REPLY,
    "extraction": CallKind.EXTRACTION,
    "decision": CallKind.DECISION,
    "combined": CallKind.COMBINED,
}


@dataclass(frozen=True)
class WritePath:
    decide_in_extraction: bool
    rounds: int
    # Only calls every round makes: alice's message always finds her earlier codes, so on
    # the combined path it never goes to a plain extraction, and its decision comes inline.
    moments: tuple[str, ...]


COMBINED = WritePath(True, 20, ("reply", "combined", "index write", "random"))
# Fewer rounds: the path is no longer the default, and each round is a bot start (~4 s CPU).
TWO_STEP = WritePath(False, 10, ("reply", "extraction", "decision", "index write", "random"))


@dataclass(frozen=True)
class Sent:
    round: int
    moment: str
    user: str
    token: str

    @property
    def text(self) -> str:
        # Similar to each other (one person, one subject), so a later one is decided on.
        return f"My locker code at the gym is {self.token}."


async def kill_during(
    bot: BotProcess, stand_in: LLMStandIn, moment: str, messages: list[Sent], chance: random.Random
) -> None:
    mark, events = stand_in.mark(), len(bot.events)
    if moment in HELD:
        stand_in.hang(HELD[moment])
    for message in messages:
        await bot.send(message.user, message.text)
    if moment in HELD:
        await stand_in.arrival(HELD[moment], after=mark, within=90)
    elif moment == "index write":
        await bot.event("index-write", after=events, within=90)
        await asyncio.sleep(chance.uniform(0, 0.03))
    else:
        await asyncio.sleep(chance.uniform(0, 1.5))
    await bot.kill()
    stand_in.behave_normally()


def reached_the_reply(stand_in: LLMStandIn, message: Sent) -> bool:
    return any(message.token in call.prompt for call in stand_in.since(0, CallKind.REPLY))


@pytest.mark.parametrize("path", [COMBINED, TWO_STEP], ids=["combined", "two-step"])
async def test_kill_9_at_random_moments_loses_nothing_and_learns_nothing_twice(
    settings: BotSettings, stand_in: LLMStandIn, path: WritePath
) -> None:
    settings = settings.with_extra(
        MNEMO_MEMORY__DECIDE_IN_EXTRACTION=str(path.decide_in_extraction).lower()
    )
    chance = random.Random(13)
    sent: list[Sent] = []
    bot = await BotProcess.start(settings)
    # Every later code of alice's is similar to this one: her facts go to the decision.
    first = Sent(0, "setup", "alice", "SETUP-0")
    assert await bot.say(first.user, first.text) == "Noted."
    sent.append(first)
    await wait_until_learned(settings.data_dir)
    await bot.stop()
    for number in range(1, path.rounds + 1):
        moment = path.moments[(number - 1) % len(path.moments)]
        messages = [
            Sent(number, moment, user, f"{user.upper()}-{number}-{uuid.uuid4().hex[:8]}")
            for user in ("alice", "bob")
        ]
        sent += messages
        bot = await BotProcess.start(settings, announce_index_writes=True)
        await kill_during(bot, stand_in, moment, messages, chance)
    bot = await BotProcess.start(settings)
    await wait_until_learned(settings.data_dir, within=300)
    assert await bot.stop() == 0
    facts = await stored_facts(settings.data_dir)
    for message in sent:
        learned = [fact for fact in facts if message.token in fact.text]
        assert len(learned) <= 1, f"learned twice: {message} -> {learned}"
        if reached_the_reply(stand_in, message) or message.moment == "setup":
            assert len(learned) == 1, f"lost: {message} (killed during {message.moment})"
    handed_over = [m for m in sent if reached_the_reply(stand_in, m)]
    assert len(handed_over) >= path.rounds, "too few messages reached the core to show anything"
    combined_calls = stand_in.since(0, CallKind.COMBINED)
    assert bool(combined_calls) == path.decide_in_extraction, "not the path under test"
    active = {fact.id for fact in await active_facts(settings.data_dir)}
    assert await indexed_ids(settings.data_dir) == active
