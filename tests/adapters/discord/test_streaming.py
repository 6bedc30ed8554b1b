"""Streamed answers on the fake Discord: discord.py's real HTTP client sends the first part
as a reply, then edits it at a bounded rate, goes on in a new message past 2,000 characters,
honours a 429, and leaves the whole answer; ``/search`` answers stream into the follow-up."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from adapters.discord.access import AccessPolicy
from adapters.discord.splitting import split_message
from bot.messages import IncomingMessage, OutgoingMessage
from tests.adapters.discord.conftest import RecordingCore, running
from tests.adapters.discord.fake_discord import FakeDiscord, Recorded
from tests.adapters.discord.payloads import (
    ALICE,
    APP_ID,
    BOT_USER,
    CHANNEL_ID,
    DM_CHANNEL_ID,
    mention_of,
)
from tests.adapters.discord.test_commands import command
from tests.adapters.discord.test_messages import said

INTERVAL = 0.3
WORDS = [f"word{number}" for number in range(60)]
ANSWER = " ".join(WORDS)


@dataclass
class WritingCore(RecordingCore):
    """Test double for the core: writes ``answer`` word by word into the message's stream,
    ``pause`` seconds a word, as the real core does with a model's stream; then returns it
    whole (with a note, as a cut answer has)."""

    answer: str = ANSWER
    pause: float = 0.02
    note: str = ""

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        self.handled.append(message)
        words = self.answer.split(" ")
        if message.stream is not None:
            for count in range(1, len(words) + 1):
                message.stream.grow(" ".join(words[:count]))
                await asyncio.sleep(self.pause)
        text = f"{self.answer}{self.note}"
        return [OutgoingMessage(text, message.room_key, reply_to_id=message.message_id)]


def to_channel(fake: FakeDiscord, channel_id: int) -> list[Recorded]:
    return [
        request
        for request in fake.requests
        if request.path.startswith(f"/channels/{channel_id}/messages")
        and request.method in ("POST", "PATCH")
    ]


async def answered(fake: FakeDiscord, core: WritingCore, text: str, channel_id: int) -> None:
    mentions = [] if channel_id == DM_CHANNEL_ID else [BOT_USER]
    await fake.dispatch("MESSAGE_CREATE", said(ALICE, text, channel_id, mentions=mentions))
    expected = split_message(f"{core.answer}{core.note}")
    await fake.wait_for(lambda _: fake.final_texts() == expected)


async def test_answer_is_sent_at_once_then_edited_at_a_bounded_rate(
    fake_discord: FakeDiscord,
) -> None:
    core = WritingCore(note="\n\n(My answer was cut off here.)")
    async with running(core, AccessPolicy(), stream_interval=INTERVAL):
        await answered(fake_discord, core, "tell me sixty words", DM_CHANNEL_ID)
    sent = to_channel(fake_discord, DM_CHANNEL_ID)
    first, edits = sent[0], sent[1:]
    assert first.method == "POST" and ANSWER.startswith(first.body["content"])
    assert len(first.body["content"]) < len(ANSWER) // 4
    assert first.body["message_reference"]["message_id"]
    assert all(edit.method == "PATCH" for edit in edits)
    assert all(edit.body["allowed_mentions"] == {"parse": []} for edit in sent)
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(sent)]
    assert min(gaps) >= INTERVAL * 0.9
    # 60 words over 1.2 s: a handful of edits, not one per word.
    assert 2 <= len(edits) <= 1.2 / INTERVAL + 3
    assert fake_discord.final_texts() == [f"{ANSWER}\n\n(My answer was cut off here.)"]


async def test_past_two_thousand_characters_the_answer_goes_on_in_a_new_message(
    fake_discord: FakeDiscord,
) -> None:
    long_answer = " ".join(f"sentence{number} is here." for number in range(220))
    assert len(long_answer) > 4000
    core = WritingCore(answer=long_answer, pause=0.002)
    async with running(core, AccessPolicy(), stream_interval=0.05):
        await answered(fake_discord, core, "a long one please", DM_CHANNEL_ID)
    texts = fake_discord.final_texts()
    assert texts == split_message(long_answer) and len(texts) == 3
    assert all(len(text) <= 2000 for text in texts)
    posts = [r for r in to_channel(fake_discord, DM_CHANNEL_ID) if r.method == "POST"]
    # Only the first part is a reply to the person's message.
    assert [bool(post.body.get("message_reference")) for post in posts] == [True, False, False]


async def test_a_429_is_waited_out_and_the_answer_still_ends_whole(
    fake_discord: FakeDiscord,
) -> None:
    fake_discord.rate_limited = [0.8]
    core = WritingCore()
    async with running(core, AccessPolicy(), stream_interval=0.1):
        await answered(fake_discord, core, "sixty words again", DM_CHANNEL_ID)
    edits = [r for r in to_channel(fake_discord, DM_CHANNEL_ID) if r.method == "PATCH"]
    limited = next(number for number, edit in enumerate(edits) if edit.status == 429)
    retried = edits[limited + 1]
    assert retried.at - edits[limited].at >= 0.8 * 0.9
    # Nothing else was sent meanwhile: one edit at a time.
    assert all(not (edits[limited].at < r.at < retried.at) for r in fake_discord.requests)
    assert fake_discord.final_texts() == [ANSWER]


async def test_in_a_server_channel_the_streamed_answer_is_a_reply_too(
    fake_discord: FakeDiscord,
) -> None:
    core = WritingCore(pause=0.005)
    async with running(core, AccessPolicy(), stream_interval=0.1):
        await answered(fake_discord, core, f"{mention_of(BOT_USER)} hi", CHANNEL_ID)
    sent = to_channel(fake_discord, CHANNEL_ID)
    assert sent[0].method == "POST" and sent[0].body["message_reference"]
    assert fake_discord.final_texts() == [ANSWER]


async def test_without_streaming_the_answer_is_sent_once_whole(fake_discord: FakeDiscord) -> None:
    core = WritingCore()
    async with running(core, AccessPolicy(), stream_interval=None):
        await answered(fake_discord, core, "sixty words", DM_CHANNEL_ID)
        assert core.handled[0].stream is None
    sent = to_channel(fake_discord, DM_CHANNEL_ID)
    assert [(r.method, r.body["content"]) for r in sent] == [("POST", ANSWER)]


async def test_search_answer_streams_into_the_follow_up(fake_discord: FakeDiscord) -> None:
    core = WritingCore()
    option = {"name": "query", "type": 3, "value": "weather in Paris"}
    payload = command("search", [option])
    async with running(core, AccessPolicy(), stream_interval=INTERVAL):
        await fake_discord.dispatch("INTERACTION_CREATE", payload)
        await fake_discord.wait_for(lambda _: fake_discord.final_texts() == [ANSWER])
    hook = f"/webhooks/{APP_ID}/{payload['token']}"
    followups = [r for r in fake_discord.requests if r.path.startswith(hook)]
    assert followups[0].method == "POST" and ANSWER.startswith(followups[0].body["content"])
    assert not followups[0].ephemeral
    edits = followups[1:]
    assert edits and all(r.method == "PATCH" for r in edits)
    gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(followups)]
    assert min(gaps) >= INTERVAL * 0.9
