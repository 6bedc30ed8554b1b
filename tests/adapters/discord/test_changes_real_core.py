"""Issue 17 on the fake Discord with the REAL core: edits, deletions, catch-up from history
and reply chains. Real: discord.py end to end, the core, SQLite, LanceDB, the embedder and the
queue worker; doubles: the fake Discord and the LLM's judgement (the scripted mind)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from discord.utils import time_snowflake

from adapters.discord.access import AccessPolicy
from memory.embedding import Embedder
from memory.scope import Scope
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import running
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.adapters.discord.payloads import (
    ALICE,
    ALICE_ID,
    BOB,
    BOT_USER,
    CHANNEL_ID,
    GUILD_ID,
    mention_of,
)
from tests.bot.core.harness import Harness, extraction_calls, fact, open_harness, reply_calls
from tests.bot.core.test_forgetting import rows_with
from tests.memory.write.gated import until

NOW = datetime.now(UTC)
recent_ids = itertools.count(time_snowflake(NOW - timedelta(hours=1)))
ALICE_DM_CHANNEL_ID = ALICE_ID + 1  # what the fake Discord opens as Alice's DM
ALICE_HERE = Scope(f"discord:{ALICE_ID}", f"discord:{CHANNEL_ID}")
ALICE_DM = Scope(f"discord:{ALICE_ID}", "discord:dm")
UPDATE_FIRST = '{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}'


@pytest.fixture
async def mnemo(tmp_path: Path, embedder: Embedder) -> AsyncIterator[Harness]:
    harness = await open_harness(tmp_path, embedder)
    yield harness
    await harness.app.aclose()


def to_bot(author: dict[str, Any], text: str, channel_id: int = CHANNEL_ID, **extra: Any) -> Any:
    guild_id = None if channel_id == ALICE_DM_CHANNEL_ID else GUILD_ID
    content = text if guild_id is None else f"{mention_of(BOT_USER)} {text}"
    mentions = [] if guild_id is None else [BOT_USER]
    return payloads.message(
        next(recent_ids), channel_id, author, content, guild_id=guild_id, mentions=mentions, **extra
    )


def sent_to(fake: FakeDiscord, channel_id: int) -> int:
    return len(fake.matching("POST", f"/channels/{channel_id}/messages"))


async def say(fake: FakeDiscord, mnemo: Harness, payload: dict[str, Any]) -> None:
    channel_id = int(payload["channel_id"])
    before = sent_to(fake, channel_id)
    await fake.dispatch("MESSAGE_CREATE", payload)
    await fake.wait_for(lambda _: sent_to(fake, channel_id) > before)
    await mnemo.app.writer.drain()


async def active(mnemo: Harness, scope: Scope = ALICE_HERE) -> list[str]:
    facts = await mnemo.app.store.read(lambda tx: tx.facts.list_in_scope(scope))
    return [f.text for f in facts]


async def settled(mnemo: Harness, check: Callable[[], Awaitable[bool]]) -> None:
    async def done() -> bool:
        await mnemo.app.writer.drain()
        return await check()

    await until(done)


async def test_an_edit_corrects_and_a_deletion_erases(
    fake_discord: FakeDiscord, mnemo: Harness
) -> None:
    mnemo.mind.facts["I live in Pari"] = [fact("I live in Pari")]
    mnemo.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    mnemo.mind.facts["My PIN is 4711"] = [fact("My PIN is 4711")]
    mnemo.mind.decisions.append(UPDATE_FIRST)
    async with running(mnemo.app.core, AccessPolicy(), stream_interval=None):
        original = to_bot(ALICE, "I live in Pari")
        await say(fake_discord, mnemo, original)
        pin = to_bot(ALICE, "My PIN is 4711")
        await say(fake_discord, mnemo, pin)

        edited = {
            **original,
            "content": f"{mention_of(BOT_USER)} I live in Paris",
            "edited_timestamp": datetime.now(UTC).isoformat(),
        }
        await fake_discord.dispatch("MESSAGE_UPDATE", edited)
        reactions = f"/channels/{CHANNEL_ID}/messages/{original['id']}/reactions/"
        await fake_discord.wait_for(lambda _: bool(fake_discord.matching("PUT", reactions)))

        async def corrected() -> bool:
            return sorted(await active(mnemo)) == ["I live in Paris", "My PIN is 4711"]

        await settled(mnemo, corrected)
        deleted = {"id": pin["id"], "channel_id": str(CHANNEL_ID), "guild_id": str(GUILD_ID)}
        await fake_discord.dispatch("MESSAGE_DELETE", deleted)

        async def erased() -> bool:
            return await active(mnemo) == ["I live in Paris"]

        await settled(mnemo, erased)

    assert await rows_with(mnemo.app.store, "4711") == []
    assert sent_to(fake_discord, CHANNEL_ID) == 2  # the edit was not answered again


async def test_history_missed_while_offline_is_learned_once(
    fake_discord: FakeDiscord, mnemo: Harness
) -> None:
    mnemo.mind.facts["I have a cat named Miso"] = [fact("I have a cat named Miso")]
    mnemo.mind.facts["I moved to Lyon"] = [fact("I moved to Lyon")]
    async with running(mnemo.app.core, AccessPolicy(), stream_interval=None):
        await say(fake_discord, mnemo, to_bot(ALICE, "hello", ALICE_DM_CHANNEL_ID))
    fake_discord.history[ALICE_DM_CHANNEL_ID] = [
        to_bot(ALICE, "I have a cat named Miso", ALICE_DM_CHANNEL_ID)
    ]
    fake_discord.history[CHANNEL_ID] = [to_bot(ALICE, "I moved to Lyon")]
    replies = sent_to(fake_discord, ALICE_DM_CHANNEL_ID) + sent_to(fake_discord, CHANNEL_ID)

    for _restart in range(2):
        async with running(mnemo.app.core, AccessPolicy(), stream_interval=None):

            async def learned() -> bool:
                return await active(mnemo, ALICE_DM) == ["I have a cat named Miso"] and (
                    await active(mnemo) == ["I moved to Lyon"]
                )

            await settled(mnemo, learned)

    extracted = [call.messages[-1].content for call in extraction_calls(mnemo.llm)]
    assert extracted.count("I have a cat named Miso") == 1
    assert extracted.count("I moved to Lyon") == 1
    assert sent_to(fake_discord, ALICE_DM_CHANNEL_ID) + sent_to(fake_discord, CHANNEL_ID) == replies


async def test_a_reply_chain_is_context_of_the_answer(
    fake_discord: FakeDiscord, mnemo: Harness
) -> None:
    mnemo.mind.replies += ["Both sound lovely; the lake is easier."]
    idea = payloads.message(next(recent_ids), CHANNEL_ID, BOB, "we could picnic by the lake")
    async with running(mnemo.app.core, AccessPolicy(), stream_interval=None):
        await say(fake_discord, mnemo, to_bot(ALICE, "what do you think?", replying_to=idea))

    system = reply_calls(mnemo.llm)[-1].system_text
    assert "The message replies to these earlier messages" in system
    assert "- Bob (" in system and "we could picnic by the lake" in system
