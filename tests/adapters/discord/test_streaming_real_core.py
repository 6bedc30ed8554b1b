"""A streamed answer on the fake Discord from the real core (SQLite, LanceDB, the embedder,
the writer; the model's judgement scripted, streamed as a server streams): the message grows
by edits, ends as the whole answer, and the answer is stored once."""

from __future__ import annotations

import itertools
from pathlib import Path

from adapters.discord.access import AccessPolicy
from memory.embedding import Embedder
from memory.records import Role
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import running
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.adapters.discord.payloads import ALICE, DM_CHANNEL_ID
from tests.bot.core.harness import ScriptedMind, open_harness

ANSWER = (
    "Miso sounds like a lovely cat. Cats that age like two meals a day, fresh water and "
    "somewhere high to sleep; a scratching post saves the sofa."
)


async def test_the_real_core_streams_into_one_discord_message(
    tmp_path: Path, embedder: Embedder, fake_discord: FakeDiscord
) -> None:
    harness = await open_harness(tmp_path, embedder, mind=ScriptedMind(replies=[ANSWER]))
    message_id = next(itertools.count(1_400_000_000_000_000_000))
    try:
        async with running(harness.app.core, AccessPolicy(), stream_interval=0.05):
            payload = payloads.message(
                message_id, DM_CHANNEL_ID, ALICE, "My cat Miso is two. Tips?", guild_id=None
            )
            await fake_discord.dispatch("MESSAGE_CREATE", payload)
            await fake_discord.wait_for(lambda _: fake_discord.final_texts() == [ANSWER])
        await harness.app.writer.drain()
        turns = await harness.app.store.read(lambda tx: tx.turns.recent("discord:dm", limit=10))
    finally:
        await harness.app.aclose()
    posts = fake_discord.matching("POST", f"/channels/{DM_CHANNEL_ID}/messages")
    edits = fake_discord.matching("PATCH", f"/channels/{DM_CHANNEL_ID}/messages/")
    assert len(posts) == 1 and ANSWER.startswith(posts[0].body["content"])
    assert len(posts[0].body["content"]) < len(ANSWER) and edits
    assert [turn.text for turn in turns if turn.role is Role.ASSISTANT] == [ANSWER]
