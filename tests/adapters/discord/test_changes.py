"""Edits, deletions, reply chains, private threads and catch-up from history, as the adapter
hands them to the core: discord.py against the fake Discord, a recording double for the core."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from discord.utils import time_snowflake

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient
from adapters.discord.handler import EDIT_REACTION
from bot.messages import CatchUpBounds
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import RecordingCore, running
from tests.adapters.discord.fake_discord import FakeDiscord
from tests.adapters.discord.payloads import (
    ALICE,
    ALICE_ID,
    BOB,
    BOT_USER,
    CHANNEL_ID,
    GUILD_ID,
    OTHER_BOT,
    OTHER_CHANNEL_ID,
    PRIVATE_THREAD_ID,
    THREAD_ID,
    mention_of,
)
from tests.adapters.discord.test_messages import handled_before_marker, say_and_wait, sent_to

# Recent ids: the catch-up reads only the last 24 hours, and Discord dates a message by its id.
NOW = datetime.now(UTC)
recent_ids = itertools.count(time_snowflake(NOW - timedelta(hours=2)))
ALICE_DM_CHANNEL_ID = ALICE_ID + 1  # what the fake Discord opens as Alice's DM


def message(
    author: dict[str, Any], content: str, channel_id: int = CHANNEL_ID, **extra: Any
) -> dict[str, Any]:
    guild_id = None if channel_id == ALICE_DM_CHANNEL_ID else GUILD_ID
    return payloads.message(
        next(recent_ids), channel_id, author, content, guild_id=guild_id, **extra
    )


def to_bot(author: dict[str, Any], text: str, channel_id: int = CHANNEL_ID, **extra: Any) -> Any:
    return message(
        author, f"{mention_of(BOT_USER)} {text}", channel_id, mentions=[BOT_USER], **extra
    )


async def test_an_edit_is_a_correction_marked_with_a_reaction_never_a_second_answer(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    original = to_bot(ALICE, "I live in Pari")
    await say_and_wait(fake_discord, original, CHANNEL_ID)

    edited = {
        **original,
        "content": f"{mention_of(BOT_USER)} I live in Paris",
        "edited_timestamp": NOW.isoformat(),
    }
    await fake_discord.dispatch("MESSAGE_UPDATE", edited)
    reactions = f"/channels/{CHANNEL_ID}/messages/{original['id']}/reactions/"
    await fake_discord.wait_for(lambda _: bool(fake_discord.matching("PUT", reactions)))

    [edit] = core.edits
    assert (edit.message_id, edit.text, edit.user_key, edit.room_key) == (
        original["id"],
        "I live in Paris",
        f"discord:{ALICE_ID}",
        f"discord:{CHANNEL_ID}",
    )
    [reaction] = fake_discord.matching("PUT", reactions)
    assert reaction.path.endswith(f"/reactions/{EDIT_REACTION}/@me")
    assert len(sent_to(fake_discord, CHANNEL_ID)) == 1


async def test_updates_that_are_no_edit_and_edits_by_bots_are_not_corrections(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    original = to_bot(ALICE, "look at https://example.org")
    await say_and_wait(fake_discord, original, CHANNEL_ID)
    # Discord adds a link preview: an update without edited_timestamp.
    await fake_discord.dispatch("MESSAGE_UPDATE", {**original, "embeds": []})
    by_bot = to_bot(OTHER_BOT, "beep", edited=NOW.isoformat())
    await fake_discord.dispatch("MESSAGE_UPDATE", by_bot)
    await handled_before_marker(fake_discord, core)
    assert core.edits == []


async def test_a_deletion_of_an_uncached_thread_message_names_the_channels_room(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    deleted_id = next(recent_ids)
    await fake_discord.dispatch(
        "MESSAGE_DELETE",
        {"id": str(deleted_id), "channel_id": str(THREAD_ID), "guild_id": str(GUILD_ID)},
    )
    await core.wait_until(lambda: bool(core.deletions))
    [deletion] = core.deletions
    assert (deletion.message_id, deletion.room_key) == (str(deleted_id), f"discord:{CHANNEL_ID}")
    # Discord does not say who deleted it.
    assert deletion.deleted_by is None


async def test_a_reply_brings_its_chain_along_from_the_same_channel_only(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    carol = payloads.user(ALICE_ID + 7, "carol")
    first = message(carol, "we could picnic by the lake")
    second = message(BOB, "or hike up Mont Ventoux", replying_to=first)
    fake_discord.history[CHANNEL_ID] = [first, second]
    # Discord nests one level only: the rest of the chain is fetched.
    shallow = {key: value for key, value in second.items() if key != "referenced_message"}
    asked = to_bot(ALICE, "what do you think?", replying_to=shallow)
    elsewhere = message(BOB, "secret plans", OTHER_CHANNEL_ID)
    crafted = to_bot(ALICE, "and this?", replying_to=elsewhere)

    await say_and_wait(fake_discord, asked, CHANNEL_ID)
    await say_and_wait(fake_discord, crafted, CHANNEL_ID, count=2)

    chain, cross = core.handled
    assert [(q.author_name, q.text) for q in chain.quoted] == [
        ("Bob", "or hike up Mont Ventoux"),
        ("Carol", "we could picnic by the lake"),
    ]
    assert cross.quoted == ()


async def test_threads_quote_their_starter_and_a_private_threads_talk_has_its_audience(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    starter = payloads.message(THREAD_ID, CHANNEL_ID, BOB, "Plans for Saturday?")
    fake_discord.history[CHANNEL_ID] = [starter]

    await say_and_wait(fake_discord, to_bot(ALICE, "ideas?", THREAD_ID), THREAD_ID)
    await say_and_wait(fake_discord, to_bot(ALICE, "cake?", PRIVATE_THREAD_ID), PRIVATE_THREAD_ID)

    in_thread, in_private = core.handled
    assert [q.text for q in in_thread.quoted] == ["Plans for Saturday?"]
    assert (in_thread.room_key, in_thread.audience) == (f"discord:{CHANNEL_ID}", None)
    assert in_private.room_key == f"discord:{CHANNEL_ID}"
    assert in_private.audience == f"discord:{PRIVATE_THREAD_ID}"


async def test_catch_up_learns_what_was_for_the_bot_from_channel_and_dm_history(
    fake_discord: FakeDiscord,
) -> None:
    old_id = time_snowflake(NOW - timedelta(hours=30))
    too_old = payloads.message(old_id, ALICE_DM_CHANNEL_ID, ALICE, "from yesterday", guild_id=None)
    unaddressed = message(ALICE, "bob, not for the bot")
    moved = to_bot(BOB, "I moved to Lyon")
    answered = message(BOT_USER, "an answer of mine")
    reply_to_bot = message(BOB, "thanks, and what about Lyon?", replying_to=answered)
    fake_discord.history[CHANNEL_ID] = [
        unaddressed,
        moved,
        answered,
        reply_to_bot,
        to_bot(OTHER_BOT, "beep"),
        to_bot(ALICE, "/memory forget all"),
    ]
    fake_discord.history[ALICE_DM_CHANNEL_ID] = [
        too_old,
        message(ALICE, "I have a cat named Miso", ALICE_DM_CHANNEL_ID),
        message(ALICE, "she is three", ALICE_DM_CHANNEL_ID),
    ]
    core = RecordingCore(direct_users=[f"discord:{ALICE_ID}", "matrix:@alice:x"])

    async with running(core, AccessPolicy()):
        await core.wait_until(lambda: len(core.caught_up) == 5)

    assert [(m.text, m.is_direct, m.reply_to_bot) for m in core.caught_up] == [
        ("I moved to Lyon", False, False),
        ("thanks, and what about Lyon?", False, True),
        ("/memory forget all", False, False),  # the core, not the adapter, skips commands
        ("I have a cat named Miso", True, False),
        ("she is three", True, False),
    ]
    assert core.handled == []
    assert all(r.method == "GET" for r in fake_discord.matching("", "/channels/"))


async def test_catch_up_keeps_the_newest_messages_of_each_channel(
    fake_discord: FakeDiscord,
) -> None:
    fake_discord.history[CHANNEL_ID] = [to_bot(ALICE, f"message {n}") for n in range(6)]
    core = RecordingCore()

    bounds = CatchUpBounds(hours=24, messages_per_room=2)
    async with running(core, AccessPolicy(), catch_up=bounds):
        await core.wait_until(lambda: len(core.caught_up) == 2)
        await handled_before_marker(fake_discord, core)

    assert [m.text for m in core.caught_up] == ["message 4", "message 5"]
