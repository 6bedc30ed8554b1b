"""Start-up against the fake Discord: token problems, the privileged intent, command sync."""

from __future__ import annotations

import pytest

from adapters.discord.access import AccessPolicy
from adapters.discord.client import (
    MnemoDiscordClient,
    ShardedMnemoDiscordClient,
    Shards,
    build_client,
    build_intents,
    run_client,
)
from adapters.discord.errors import (
    DiscordSetupError,
    MessageContentIntentMissing,
    TokenRejected,
)
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import RecordingCore, connect, running
from tests.adapters.discord.fake_discord import FakeDiscord

MESSAGE_CONTENT_INTENT = 1 << 15
GUILD_MEMBERS_INTENT = 1 << 1


def new_client() -> MnemoDiscordClient:
    return MnemoDiscordClient(RecordingCore(), AccessPolicy(), guild_ready_timeout=0.05)


@pytest.mark.parametrize("token", [None, "", "   "])
async def test_missing_token_says_where_to_get_one(
    fake_discord: FakeDiscord, token: str | None
) -> None:
    with pytest.raises(DiscordSetupError) as raised:
        await run_client(new_client(), token)
    message = str(raised.value)
    assert "discord.token is not set" in message
    assert "MNEMO_DISCORD__TOKEN" in message and "Developer Portal" in message
    assert fake_discord.requests == []


async def test_a_bot_prefix_is_refused_before_asking_discord(fake_discord: FakeDiscord) -> None:
    with pytest.raises(DiscordSetupError, match="starts with 'Bot '"):
        await run_client(new_client(), f"Bot {payloads.TOKEN}")
    assert fake_discord.requests == []


async def test_a_rejected_token_names_the_fix(fake_discord: FakeDiscord) -> None:
    with pytest.raises(TokenRejected) as raised:
        await run_client(new_client(), "MTIz.wrong.token")
    assert "Reset Token" in str(raised.value)
    assert [(r.method, r.path) for r in fake_discord.requests] == [("GET", "/users/@me")]


async def test_a_refused_message_content_intent_names_the_switch(fake_discord: FakeDiscord) -> None:
    fake_discord.refuse_message_content = True
    with pytest.raises(MessageContentIntentMissing) as raised:
        await run_client(new_client(), payloads.TOKEN)
    message = str(raised.value)
    assert "Privileged Gateway Intents" in message and "MESSAGE CONTENT INTENT" in message
    assert fake_discord.identify is not None


async def test_the_bot_asks_for_message_content_and_not_for_members(
    client: MnemoDiscordClient, fake_discord: FakeDiscord
) -> None:
    assert fake_discord.identify is not None
    intents = int(fake_discord.identify["intents"])
    assert intents & MESSAGE_CONTENT_INTENT
    assert not intents & GUILD_MEMBERS_INTENT
    assert intents == build_intents().value


async def test_commands_are_uploaded_once_and_not_again_when_unchanged(
    fake_discord: FakeDiscord,
) -> None:
    async with running(RecordingCore(), AccessPolicy()):
        pass
    uploads = fake_discord.matching("PUT", f"/applications/{payloads.APP_ID}/commands")
    assert len(uploads) == 1
    assert {command["name"] for command in uploads[0].body["_list"]} == {"memory", "search"}

    async with running(RecordingCore(), AccessPolicy()):
        pass
    assert len(fake_discord.matching("PUT", f"/applications/{payloads.APP_ID}/commands")) == 1

    fake_discord.commands[0]["description"] = "an older description"
    async with running(RecordingCore(), AccessPolicy()):
        pass
    assert len(fake_discord.matching("PUT", f"/applications/{payloads.APP_ID}/commands")) == 2


async def test_a_sharded_process_identifies_each_of_its_shards(
    fake_discord: FakeDiscord,
) -> None:
    """``--shard-ids 1,3 --shard-count 4``: one gateway session per shard of this process,
    each identified as [shard, count] (discord.py's sharding); the others are left alone."""
    client = build_client(
        RecordingCore(), AccessPolicy(), Shards((1, 3), 4), guild_ready_timeout=0.05
    )
    assert isinstance(client, ShardedMnemoDiscordClient)
    task = await connect(client)
    try:
        shards = sorted(tuple(identify["shard"]) for identify in fake_discord.identifies)
        assert shards == [(1, 4), (3, 4)]
        assert client.shard_count == 4
    finally:
        await client.close()
        await task
