"""Messages from the fake gateway: who is answered, how it is normalised, how replies go out."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from discord.utils import time_snowflake

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient
from adapters.discord.commands import FAILURE_TEXT
from adapters.discord.delivery import DIRECT_MESSAGES_CLOSED, PRIVATE_IN_PUBLIC_NOTE
from bot.messages import Attachment, IncomingMessage, OutgoingMessage
from tests.adapters.discord import payloads
from tests.adapters.discord.conftest import RecordingCore, running
from tests.adapters.discord.fake_discord import FakeDiscord, Recorded
from tests.adapters.discord.payloads import (
    ALICE,
    ALICE_ID,
    BOB,
    BOT_ID,
    BOT_ROLE_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    GUILD_ID,
    MEMBER_ROLE_ID,
    OTHER_BOT,
    OTHER_CHANNEL_ID,
    THREAD_ID,
    mention_of,
)

# Discord derives a message's time from its id, so ids are minted at the test's clock time.
message_ids = itertools.count(time_snowflake(payloads.MESSAGE_TIME))


def said(
    author: dict[str, Any], content: str, channel_id: int = CHANNEL_ID, **extra: Any
) -> dict[str, Any]:
    guild_id = None if channel_id == DM_CHANNEL_ID else GUILD_ID
    return payloads.message(
        next(message_ids), channel_id, author, content, guild_id=guild_id, **extra
    )


def sent_to(fake: FakeDiscord, channel_id: int) -> list[Recorded]:
    return fake.matching("POST", f"/channels/{channel_id}/messages")


async def say_and_wait(
    fake: FakeDiscord, payload: dict[str, Any], channel_id: int, count: int = 1
) -> list[Recorded]:
    await fake.dispatch("MESSAGE_CREATE", payload)
    await fake.wait_for(lambda _: len(sent_to(fake, channel_id)) >= count)
    return sent_to(fake, channel_id)


async def handled_before_marker(fake: FakeDiscord, core: RecordingCore) -> list[IncomingMessage]:
    """What the core got from the messages sent so far, once all of them are dealt with.

    A DM marker is sent last: the gateway delivers frames in order, so once the marker is
    answered every earlier message has reached discord.py, which runs each ``on_message``
    as a task named after the event; waiting for those tasks settles the rest.
    """
    await say_and_wait(fake, said(ALICE, "marker", DM_CHANNEL_ID), DM_CHANNEL_ID)
    pending = [task for task in asyncio.all_tasks() if task.get_name() == "discord.py: on_message"]
    await asyncio.gather(*pending)
    return [message for message in core.handled if message.text != "marker"]


async def test_direct_message_is_normalised_and_answered_as_a_reply(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    payload = said(ALICE, "I live in Lyon", DM_CHANNEL_ID)
    sent = await say_and_wait(fake_discord, payload, DM_CHANNEL_ID)

    assert core.handled == [
        IncomingMessage(
            platform="discord",
            user_key=f"discord:{ALICE_ID}",
            display_name="Alice",
            room_key=f"discord:{DM_CHANNEL_ID}",
            text="I live in Lyon",
            time=payloads.MESSAGE_TIME,
            is_direct=True,
            message_id=payload["id"],
        )
    ]
    assert core.handled[0].scope().room == "discord:dm"
    assert sent[0].body["content"] == "echo: I live in Lyon"
    assert sent[0].body["message_reference"]["message_id"] == int(payload["id"])
    assert sent[0].body["allowed_mentions"] == {"parse": []}


async def test_typing_is_shown_before_the_answer(
    client: MnemoDiscordClient, fake_discord: FakeDiscord
) -> None:
    await say_and_wait(fake_discord, said(ALICE, "hello", DM_CHANNEL_ID), DM_CHANNEL_ID)
    # (The catch-up at start-up only reads: GETs of channel history.)
    paths = [
        r.path
        for r in fake_discord.requests
        if r.path.startswith("/channels/") and r.method == "POST"
    ]
    assert paths == [f"/channels/{DM_CHANNEL_ID}/typing", f"/channels/{DM_CHANNEL_ID}/messages"]


async def test_an_answer_still_comes_when_typing_cannot_be_shown(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    fake_discord.typing_forbidden.add(DM_CHANNEL_ID)
    sent = await say_and_wait(fake_discord, said(ALICE, "hello", DM_CHANNEL_ID), DM_CHANNEL_ID)
    assert [r.body["content"] for r in sent] == ["echo: hello"]
    assert len(fake_discord.matching("POST", f"/channels/{DM_CHANNEL_ID}/typing")) == 1


async def test_mention_in_a_server_is_answered_without_the_mention(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    content = f"{mention_of(BOT_USER)} what does {mention_of(BOB)} like?"
    await say_and_wait(fake_discord, said(ALICE, content, mentions=[BOT_USER, BOB]), CHANNEL_ID)
    message = core.handled[0]
    assert message.text == "what does @Bob like?"
    assert (message.room_key, message.is_direct, message.mentions_bot) == (
        f"discord:{CHANNEL_ID}",
        False,
        True,
    )
    assert message.scope().room == f"discord:{CHANNEL_ID}"


async def test_nickname_form_of_the_mention_is_removed_too(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    content = f"<@!{BOT_ID}>   how are you?"
    await say_and_wait(fake_discord, said(ALICE, content, mentions=[BOT_USER]), CHANNEL_ID)
    assert core.handled[0].text == "how are you?"


async def test_mention_of_the_bots_own_role_counts_as_a_mention(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    content = f"<@&{BOT_ROLE_ID}> hello"
    await say_and_wait(fake_discord, said(ALICE, content, mention_roles=[BOT_ROLE_ID]), CHANNEL_ID)
    assert core.handled[0].text == "hello"
    assert core.handled[0].mentions_bot


async def test_reply_to_the_bot_is_answered(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    earlier = said(BOT_USER, "What is your cat called?")
    await say_and_wait(fake_discord, said(ALICE, "Miso", replying_to=earlier), CHANNEL_ID)
    message = core.handled[0]
    assert (message.text, message.reply_to_bot, message.mentions_bot) == ("Miso", True, False)
    assert message.reply_to_id == earlier["id"]


async def test_thread_talk_belongs_to_the_parent_channel_and_is_answered_in_the_thread(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    payload = said(ALICE, f"{mention_of(BOT_USER)} plans?", THREAD_ID, mentions=[BOT_USER])
    sent = await say_and_wait(fake_discord, payload, THREAD_ID)
    message = core.handled[0]
    assert (message.room_key, message.thread_id) == (f"discord:{CHANNEL_ID}", str(THREAD_ID))
    assert sent[0].body["message_reference"]["message_id"] == int(payload["id"])


async def test_messages_not_for_the_bot_are_ignored(
    client: MnemoDiscordClient, fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    someone_else = said(BOB, "hi alice")
    ignored = [
        said(ALICE, "just chatting in the channel"),
        said(ALICE, "@Mnemo typed by hand is not a mention"),
        said(ALICE, "replying to Bob", replying_to=someone_else),
        said(OTHER_BOT, f"{mention_of(BOT_USER)} bots never", mentions=[BOT_USER]),
        said(BOT_USER, f"{mention_of(BOT_USER)} not myself", mentions=[BOT_USER]),
        said(ALICE, f"{mention_of(BOT_USER)} via webhook", mentions=[BOT_USER], webhook_id=77),
        said(ALICE, f"{mention_of(BOT_USER)}", mentions=[BOT_USER]),  # nothing to answer
        said(ALICE, f"{mention_of(BOT_USER)} pinned", mentions=[BOT_USER], message_type=6),
        said(OTHER_BOT, "bots are ignored in DMs too", DM_CHANNEL_ID),
    ]
    for payload in ignored:
        await fake_discord.dispatch("MESSAGE_CREATE", payload)
    assert await handled_before_marker(fake_discord, core) == []
    assert sent_to(fake_discord, CHANNEL_ID) == []


async def test_allow_lists_decide_who_is_answered_where(
    fake_discord: FakeDiscord, core: RecordingCore
) -> None:
    policy = AccessPolicy(
        users=frozenset({ALICE_ID}),
        roles=frozenset({MEMBER_ROLE_ID}),
        channels=frozenset({CHANNEL_ID}),
    )
    mention = f"{mention_of(BOT_USER)} hi"
    cases = {
        "alice in general": said(ALICE, mention + " 1", mentions=[BOT_USER]),
        "bob with the role": said(BOB, mention + " 2", mentions=[BOT_USER], roles=[MEMBER_ROLE_ID]),
        "bob without": said(BOB, mention + " 3", mentions=[BOT_USER]),
        "alice in random": said(ALICE, mention + " 4", OTHER_CHANNEL_ID, mentions=[BOT_USER]),
        "alice in a thread of general": said(ALICE, mention + " 5", THREAD_ID, mentions=[BOT_USER]),
        "bob by DM": said(BOB, "hi 6", DM_CHANNEL_ID),
    }
    async with running(core, policy):
        for payload in cases.values():
            await fake_discord.dispatch("MESSAGE_CREATE", payload)
        before = await handled_before_marker(fake_discord, core)
    assert sorted(message.text[-1] for message in before) == ["1", "2", "5"]


async def test_long_answer_is_split_and_only_the_first_piece_is_a_reply(
    fake_discord: FakeDiscord,
) -> None:
    long_answer = "\n".join(f"Line {number}: " + "tea " * 20 for number in range(50))
    core = RecordingCore(respond=lambda m: [OutgoingMessage(long_answer, m.room_key)])
    async with running(core, AccessPolicy()):
        sent = await say_and_wait(
            fake_discord, said(ALICE, "tell me everything", DM_CHANNEL_ID), DM_CHANNEL_ID, count=3
        )
    assert len(sent) == 3
    assert "message_reference" in sent[0].body
    assert all("message_reference" not in r.body for r in sent[1:])
    assert all(len(r.body["content"]) <= 2000 for r in sent)
    assert "\n".join(r.body["content"] for r in sent) == long_answer
    assert all(r.body["allowed_mentions"] == {"parse": []} for r in sent)


async def test_mentions_in_the_answer_cannot_ping_anyone(fake_discord: FakeDiscord) -> None:
    text = f"@everyone @here {mention_of(ALICE)} <@&{MEMBER_ROLE_ID}> look!"
    core = RecordingCore(respond=lambda m: [OutgoingMessage(text, m.room_key)])
    async with running(core, AccessPolicy()):
        sent = await say_and_wait(
            fake_discord, said(ALICE, f"{mention_of(BOT_USER)} hi", mentions=[BOT_USER]), CHANNEL_ID
        )
    assert sent[0].body["content"] == text
    assert sent[0].body["allowed_mentions"] == {"parse": []}  # no users, roles or everyone
    assert not sent[0].body["allowed_mentions"].get("replied_user", False)


async def test_private_answer_asked_in_a_server_goes_by_direct_message(
    fake_discord: FakeDiscord,
) -> None:
    core = RecordingCore(
        respond=lambda m: [OutgoingMessage("1. I live in Lyon", m.room_key, private=True)]
    )
    async with running(core, AccessPolicy()):
        await fake_discord.dispatch(
            "MESSAGE_CREATE",
            said(ALICE, f"{mention_of(BOT_USER)} !memory list", mentions=[BOT_USER]),
        )
        await fake_discord.wait_for(lambda _: len(sent_to(fake_discord, CHANNEL_ID)) == 1)
    direct = sent_to(fake_discord, ALICE_ID + 1)
    assert [r.body["content"] for r in direct] == ["1. I live in Lyon"]
    assert [r.body["content"] for r in sent_to(fake_discord, CHANNEL_ID)] == [
        PRIVATE_IN_PUBLIC_NOTE
    ]


async def test_private_answer_is_never_posted_publicly_when_direct_messages_are_closed(
    fake_discord: FakeDiscord,
) -> None:
    fake_discord.send_forbidden.add(ALICE_ID + 1)
    core = RecordingCore(
        respond=lambda m: [OutgoingMessage("1. I live in Lyon", m.room_key, private=True)]
    )
    async with running(core, AccessPolicy()):
        await fake_discord.dispatch(
            "MESSAGE_CREATE",
            said(ALICE, f"{mention_of(BOT_USER)} !memory list", mentions=[BOT_USER]),
        )
        await fake_discord.wait_for(lambda _: len(sent_to(fake_discord, CHANNEL_ID)) == 1)
    assert [r.body["content"] for r in sent_to(fake_discord, CHANNEL_ID)] == [
        DIRECT_MESSAGES_CLOSED
    ]


async def test_an_answer_to_a_message_deleted_meanwhile_is_still_sent(
    client: MnemoDiscordClient, fake_discord: FakeDiscord
) -> None:
    payload = said(ALICE, "hello", DM_CHANNEL_ID)
    fake_discord.deleted_messages.add(int(payload["id"]))
    sent = await say_and_wait(fake_discord, payload, DM_CHANNEL_ID)
    assert sent[0].body["content"] == "echo: hello"
    assert sent[0].body["message_reference"]["fail_if_not_exists"] is False


async def test_a_channel_the_bot_cannot_write_in_is_logged_with_the_permissions(
    client: MnemoDiscordClient,
    fake_discord: FakeDiscord,
    core: RecordingCore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_discord.send_forbidden.add(CHANNEL_ID)
    await fake_discord.dispatch(
        "MESSAGE_CREATE", said(ALICE, f"{mention_of(BOT_USER)} hi", mentions=[BOT_USER])
    )
    await handled_before_marker(fake_discord, core)
    assert f"cannot answer in channel {CHANNEL_ID}" in caplog.text
    assert "Send Messages" in caplog.text


async def test_a_failing_core_gets_an_apology_not_silence(fake_discord: FakeDiscord) -> None:
    def broken(message: IncomingMessage) -> list[OutgoingMessage]:
        raise RuntimeError("database is on fire")

    async with running(RecordingCore(respond=broken), AccessPolicy()):
        sent = await say_and_wait(fake_discord, said(ALICE, "hello", DM_CHANNEL_ID), DM_CHANNEL_ID)
    assert sent[0].body["content"] == FAILURE_TEXT


async def test_attachments_are_uploaded_as_files(fake_discord: FakeDiscord) -> None:
    export = Attachment("memory.json", b'{"facts": []}')
    core = RecordingCore(
        respond=lambda m: [OutgoingMessage("Your export", m.room_key, attachments=(export,))]
    )
    async with running(core, AccessPolicy()):
        sent = await say_and_wait(fake_discord, said(ALICE, "export", DM_CHANNEL_ID), DM_CHANNEL_ID)
    assert sent[0].files == {"memory.json": b'{"facts": []}'}
    assert sent[0].body["content"] == "Your export"


def test_bot_id_constant_matches_the_logged_in_user() -> None:
    assert BOT_USER["id"] == str(BOT_ID)
