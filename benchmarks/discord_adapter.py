"""What the Discord adapter adds: a message's round trip, and fact autocomplete on big scopes.

    .venv/bin/python -m benchmarks.discord_adapter [--messages 200] [--facts 1000 10000]

Runs discord.py and Mnemo's client against the fake Discord of the tests (REST and gateway on
127.0.0.1), so the numbers include discord.py's parsing and its HTTP calls, but no internet.

1. Round trip: a DM arrives on the gateway, the adapter filters and normalises it, shows
   "typing", asks a core that answers instantly, and sends the reply; measured from the
   gateway frame leaving the fake to the reply reaching it.
2. Autocomplete: Discord allows 3 seconds for autocomplete, with no way to defer. One person
   has ``--facts`` active facts in one channel (two others as many each, in the same room);
   measured from the INTERACTION_CREATE frame to the choices reaching the fake, through the
   real ``ConversationCore.fact_choices`` on SQLite.

Prints p50/p95/max in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from typing import Any

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route
from discord.utils import time_snowflake

from adapters.discord.access import AccessPolicy
from bot.app import Application, build_application
from bot.config import Config
from bot.messages import IncomingMessage, OutgoingMessage
from memory.embedding import Embedder
from memory.llm import ScriptedLanguageModel
from memory.records import NewFact
from memory.scope import Scope
from memory.store import StoreTransaction
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import RecordingCore, running
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.conftest import real_embedder

ids = itertools.count(time_snowflake(payloads.MESSAGE_TIME))


def summary(label: str, seconds: Sequence[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return (
        f"{label}: n={len(ordered)} p50={statistics.median(ordered) * 1000:.1f} ms "
        f"p95={p95 * 1000:.1f} ms max={ordered[-1] * 1000:.1f} ms"
    )


def instant(message: IncomingMessage) -> list[OutgoingMessage]:
    return [OutgoingMessage("ok", message.room_key)]


def dm_replies(fake: FakeDiscord) -> int:
    return len(fake.matching("POST", f"/channels/{payloads.DM_CHANNEL_ID}/messages"))


def has_dm_replies(fake: FakeDiscord, wanted: int, _: object) -> bool:
    return dm_replies(fake) >= wanted


def answered(fake: FakeDiscord, interaction_id: str, _: object) -> bool:
    return bool(fake.matching("POST", f"/interactions/{interaction_id}/"))


async def round_trips(fake: FakeDiscord, count: int) -> list[float]:
    timings = []
    async with running(RecordingCore(respond=instant), AccessPolicy()):
        for _ in range(count):
            wanted = dm_replies(fake) + 1
            payload = payloads.message(
                next(ids), payloads.DM_CHANNEL_ID, payloads.ALICE, "hello", guild_id=None
            )
            started = time.perf_counter()
            await fake.dispatch("MESSAGE_CREATE", payload)
            await fake.wait_for(partial(has_dm_replies, fake, wanted))
            timings.append(time.perf_counter() - started)
    return timings


async def fill(application: Application, facts: int) -> None:
    """``facts`` facts each for Alice, Bob and a third person in #general.

    SQLite only: autocomplete reads no vectors, and the index is not reconciled while the
    application stays open.
    """
    room = f"discord:{payloads.CHANNEL_ID}"
    owners = (payloads.ALICE_ID, payloads.BOB_ID, 1_200_000_000_000_000_099)

    def add(tx: StoreTransaction) -> None:
        for owner in owners:
            scope = Scope(f"discord:{owner}", room)
            for number in range(facts):
                tx.facts.add(scope, NewFact(f"I noted thing number {number} here"))

    await application.store.write(add)


async def autocompletes(
    fake: FakeDiscord, config: Config, embedder: Embedder, facts: int, count: int
) -> list[float]:
    application = await build_application(config, llm=ScriptedLanguageModel(), embedder=embedder)
    timings = []
    try:
        await fill(application, facts)
        async with running(application.core, AccessPolicy()):
            for typed in itertools.islice(itertools.cycle(["", "12", "thing", "999"]), count):
                payload = autocomplete_payload(typed)
                started = time.perf_counter()
                await fake.dispatch("INTERACTION_CREATE", payload)
                interaction_id = str(payload["id"])
                await fake.wait_for(partial(answered, fake, interaction_id))
                timings.append(time.perf_counter() - started)
    finally:
        await application.aclose()
    return timings


def autocomplete_payload(typed: str) -> dict[str, Any]:
    focused = {"name": "fact", "type": 4, "value": typed, "focused": True}
    return payloads.interaction(
        next(ids),
        "memory",
        [{"name": "forget", "type": 1, "options": [focused]}],
        invoker=payloads.ALICE,
        autocomplete=True,
    )


async def main(messages: int, fact_counts: Sequence[int], completions: int) -> None:
    embedder = real_embedder()
    fake = FakeDiscord()
    await fake.start()
    fake.ready_guilds = [payloads.guild()]
    Route.BASE = fake.base_url
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    try:
        print(summary("DM round trip (instant core)", await round_trips(fake, messages)))
        for facts in fact_counts:
            with tempfile.TemporaryDirectory() as directory:
                config = Config.model_validate({"storage": {"data_dir": directory}})
                timings = await autocompletes(fake, config, embedder, facts, completions)
                print(summary(f"autocomplete, {facts} facts in the caller's scope", timings))
    finally:
        await fake.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--facts", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--completions", type=int, default=40)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.messages, arguments.facts, arguments.completions))
