"""The Discord adapter on the real conversation core.

Real: the core, its commands, SQLite, LanceDB and the all-MiniLM-L6-v2 embedder (temp
files), and discord.py end to end against the fake Discord on 127.0.0.1. The only double
besides the fake Discord is the LLM's judgement (the core's ``ScriptedMind``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from discord.utils import time_snowflake

from adapters.discord.access import AccessPolicy
from memory.embedding import Embedder
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import running
from tests.adapters.discord.fake_discord import FakeDiscord, Recorded
from tests.adapters.discord.payloads import (
    ALICE,
    APP_ID,
    BOB,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    OTHER_CHANNEL_ID,
    mention_of,
    subcommand,
)
from tests.bot.core.harness import Harness, open_harness, reply_calls

ids = itertools.count(time_snowflake(payloads.MESSAGE_TIME))


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, fake_discord: FakeDiscord
) -> AsyncIterator[Harness]:
    # Answers come whole here; test_streaming_real_core.py streams them.
    harness = await open_harness(tmp_path, embedder)
    try:
        async with running(harness.app.core, AccessPolicy(), stream_interval=None):
            yield harness
    finally:
        await harness.app.aclose()


def channel_messages(fake: FakeDiscord, channel_id: int) -> list[Recorded]:
    return fake.matching("POST", f"/channels/{channel_id}/messages")


async def mention(
    fake: FakeDiscord, author: dict[str, Any], text: str, channel_id: int = CHANNEL_ID
) -> str:
    """``author`` says ``@Mnemo text`` in a server channel; returns the bot's reply."""
    before = len(channel_messages(fake, channel_id))
    payload = payloads.message(
        next(ids), channel_id, author, f"{mention_of(BOT_USER)} {text}", mentions=[BOT_USER]
    )
    await fake.dispatch("MESSAGE_CREATE", payload)
    await fake.wait_for(lambda _: len(channel_messages(fake, channel_id)) > before)
    reply = channel_messages(fake, channel_id)[before]
    assert reply.body["message_reference"]["message_id"] == int(payload["id"])
    return str(reply.body["content"])


async def slash(
    fake: FakeDiscord,
    author: dict[str, Any],
    option: dict[str, Any],
    *,
    direct: bool = False,
    channel_id: int = CHANNEL_ID,
) -> Recorded:
    """``/memory <option>``; returns the (single) follow-up answering it."""
    channel = payloads.channel(channel_id, "somewhere")
    payload = payloads.interaction(
        next(ids), "memory", [option], invoker=author, direct=direct, channel_payload=channel
    )
    await fake.dispatch("INTERACTION_CREATE", payload)
    url = f"/webhooks/{APP_ID}/{payload['token']}"
    await fake.wait_for(lambda _: len(fake.matching("POST", url)) >= 1)
    (answer,) = fake.matching("POST", url)
    return answer


async def complete(
    fake: FakeDiscord, author: dict[str, Any], sub: str, typed: str, channel_id: int = CHANNEL_ID
) -> list[dict[str, Any]]:
    """Autocomplete of the ``fact`` option of ``/memory <sub>``; returns the choices offered."""
    focused = {"name": "fact", "type": 4, "value": typed, "focused": True}
    channel = payloads.channel(channel_id, "somewhere")
    payload = payloads.interaction(
        next(ids),
        "memory",
        [{"name": sub, "type": 1, "options": [focused]}],
        invoker=author,
        channel_payload=channel,
        autocomplete=True,
    )
    await fake.dispatch("INTERACTION_CREATE", payload)
    url = f"/interactions/{payload['id']}/"
    await fake.wait_for(lambda _: len(fake.matching("POST", url)) == 1)
    choices: list[dict[str, Any]] = fake.matching("POST", url)[0].body["data"]["choices"]
    return choices


async def test_a_fact_told_in_a_channel_is_listed_only_to_its_owner_there(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    told = await mention(fake_discord, ALICE, "remember that I have a cat named Miso")
    assert "I have a cat named Miso" in told
    await mention(fake_discord, BOB, "remember that I play the cello")

    alice_here = await slash(fake_discord, ALICE, subcommand("list"))
    bob_here = await slash(fake_discord, BOB, subcommand("list"))
    alice_elsewhere = await slash(
        fake_discord, ALICE, subcommand("list"), channel_id=OTHER_CHANNEL_ID
    )
    alice_by_dm = await slash(fake_discord, ALICE, subcommand("list"), direct=True)

    assert all(a.ephemeral for a in (alice_here, bob_here, alice_elsewhere, alice_by_dm))
    assert "Miso" in alice_here.body["content"] and "cello" not in alice_here.body["content"]
    assert "cello" in bob_here.body["content"] and "Miso" not in bob_here.body["content"]
    assert "Miso" not in alice_elsewhere.body["content"]
    assert "Miso" not in alice_by_dm.body["content"]


async def test_autocomplete_offers_only_the_callers_facts_in_this_channel(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    await mention(fake_discord, ALICE, "remember that I have a cat named Miso")
    await mention(fake_discord, ALICE, "remember that I live in Lyon")
    await mention(fake_discord, BOB, "remember that I live in Lille")

    alice = await complete(fake_discord, ALICE, "forget", "")
    assert sorted(choice["name"] for choice in alice) == [
        "#1 I have a cat named Miso",
        "#2 I live in Lyon",
    ]
    assert [c["value"] for c in await complete(fake_discord, ALICE, "history", "lyon")] == [2]
    assert [c["name"] for c in await complete(fake_discord, BOB, "forget", "")] == [
        "#3 I live in Lille"
    ]
    assert await complete(fake_discord, BOB, "forget", "Miso") == []
    assert await complete(fake_discord, ALICE, "forget", "", channel_id=OTHER_CHANNEL_ID) == []


async def test_nobody_can_forget_someone_elses_fact(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    await mention(fake_discord, ALICE, "remember that I have a cat named Miso")

    bob_tries = await slash(fake_discord, BOB, subcommand("forget", fact=1))
    assert bob_tries.body["content"].startswith("I have no fact #1 about you here.")
    assert bob_tries.ephemeral
    still_there = await slash(fake_discord, ALICE, subcommand("list"))
    assert "Miso" in still_there.body["content"]

    alice_does = await slash(fake_discord, ALICE, subcommand("forget", fact=1))
    assert alice_does.body["content"] == "Forgotten for good: #1."
    assert "Miso" not in (await slash(fake_discord, ALICE, subcommand("list"))).body["content"]


async def test_export_is_a_json_file_only_the_caller_sees(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    await mention(fake_discord, ALICE, "remember that I have a cat named Miso")
    answer = await slash(fake_discord, ALICE, subcommand("export"))
    assert answer.ephemeral
    ((name, content),) = answer.files.items()
    assert name.endswith(".json")
    exported = json.dumps(json.loads(content))
    assert "I have a cat named Miso" in exported


async def test_forget_all_asks_in_slash_command_terms_then_forgets(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    await mention(fake_discord, ALICE, "remember that I have a cat named Miso")
    asked = await slash(fake_discord, ALICE, subcommand("forget-all"))
    assert "/memory forget-all confirm: True" in asked.body["content"]
    done = await slash(fake_discord, ALICE, subcommand("forget-all", confirm=True))
    assert done.body["content"] == "Done: I forgot the one fact about you here."


async def test_a_question_in_a_channel_is_answered_from_the_askers_memory(
    bot: Harness, fake_discord: FakeDiscord
) -> None:
    await mention(fake_discord, ALICE, "remember that I have a cat named Miso")
    await mention(fake_discord, BOB, "remember that my cat is called Rex")
    bot.mind.replies.append("Your cat is called Miso.")

    answer = await mention(fake_discord, ALICE, "what is my cat called?")

    assert answer == "Your cat is called Miso."
    prompt = reply_calls(bot.llm)[-1].prompt_text
    assert "Alice has a cat named Miso" in prompt and "Rex" not in prompt
    typing = fake_discord.matching("POST", f"/channels/{CHANNEL_ID}/typing")
    assert len(typing) >= 3


async def test_a_direct_message_uses_the_dm_memory(bot: Harness, fake_discord: FakeDiscord) -> None:
    payload = payloads.message(
        next(ids), DM_CHANNEL_ID, ALICE, "remember that I work nights", guild_id=None
    )
    await fake_discord.dispatch("MESSAGE_CREATE", payload)
    await fake_discord.wait_for(lambda _: len(channel_messages(fake_discord, DM_CHANNEL_ID)) == 1)
    by_dm = await slash(fake_discord, ALICE, subcommand("list"), direct=True)
    in_channel = await slash(fake_discord, ALICE, subcommand("list"))
    assert "I work nights" in by_dm.body["content"]
    assert "I work nights" not in in_channel.body["content"]
