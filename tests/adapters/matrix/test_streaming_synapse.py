"""Streamed answers on a real Synapse, read by a real matrix-nio client: the first part an
``m.text`` reply, then ``m.replace`` edits of it at a bounded rate, the last one with the
whole answer; encrypted rooms too; past ``max_message_chars`` a second message; and from the
real core, the answer stored once."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from adapters.matrix.formatting import split_message
from bot.messages import IncomingMessage, OutgoingMessage
from memory.records import Role
from tests.adapters.matrix.conftest import MakePerson, RecordingCore, StartBot
from tests.adapters.matrix.people import Person, Received
from tests.adapters.matrix.rooms import open_dm, open_group
from tests.bot.core.harness import Harness

pytestmark = pytest.mark.synapse

INTERVAL = 0.3
ANSWER = " ".join(f"word{number}" for number in range(60))


class WritingCore(RecordingCore):
    """Test double for the core: writes the answer word by word into the message's stream,
    ``pause`` seconds a word, as the real core does with a model's stream."""

    def __init__(self, answer: str = ANSWER, pause: float = 0.02) -> None:
        super().__init__(lambda message: answer)
        self.answer = answer
        self.pause = pause

    async def handle(self, message: IncomingMessage) -> list[OutgoingMessage]:
        words = self.answer.split(" ")
        if message.stream is not None:
            for count in range(1, len(words) + 1):
                message.stream.grow(" ".join(words[:count]))
                await asyncio.sleep(self.pause)
        return await super().handle(message)


def is_edit(message: Received) -> bool:
    relation: dict[str, str] = message.content.get("m.relates_to", {})
    return relation.get("rel_type") == "m.replace"


def shown_now(person: Person, bot_id: str, room_id: str) -> list[str]:
    """Each of the bot's messages in the room as Element shows it: its last edit's text."""
    texts: dict[str, str] = {}
    for message in person.messages_from(bot_id, room_id):
        if is_edit(message):
            texts[message.content["m.relates_to"]["event_id"]] = message.content["m.new_content"][
                "body"
            ]
        else:
            texts[message.event_id] = message.body
    return list(texts.values())


async def wait_for_whole(person: Person, bot_id: str, room_id: str, parts: list[str]) -> None:
    await person.wait_until(lambda: shown_now(person, bot_id, room_id) == parts)


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
async def test_answer_grows_by_replace_edits_at_a_bounded_rate(
    start_bot: StartBot, make_person: MakePerson, encrypted: bool
) -> None:
    bot = await start_bot(WritingCore(), stream_interval=INTERVAL)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id, encrypted=encrypted)

    asked = await alice.send(room_id, "sixty words, please")
    await wait_for_whole(alice, bot_id, room_id, [ANSWER])

    first, *edits = alice.messages_from(bot_id, room_id)
    assert first.content["msgtype"] == "m.text" and not is_edit(first)
    assert first.content["m.relates_to"] == {"m.in_reply_to": {"event_id": asked}}
    assert ANSWER.startswith(first.body) and len(first.body) < len(ANSWER) // 4
    assert edits and all(is_edit(edit) for edit in edits)
    assert {edit.content["m.relates_to"]["event_id"] for edit in edits} == {first.event_id}
    assert all(edit.body.startswith("* ") for edit in edits)
    assert edits[-1].content["m.new_content"]["body"] == ANSWER
    assert "<p>word0" in edits[-1].content["m.new_content"]["formatted_body"]
    assert all(message.encrypted is encrypted for message in [first, *edits])
    times = [message.server_time_ms for message in [first, *edits]]
    assert min(b - a for a, b in itertools.pairwise(times)) >= INTERVAL * 1000 * 0.8
    # 60 words over 1.2 s: a handful of edits, not one per word.
    assert len(edits) <= 1.2 / INTERVAL + 3


async def test_past_the_message_limit_the_answer_goes_on_in_a_new_message(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    bot = await start_bot(WritingCore(pause=0.005), stream_interval=0.1, max_message_chars=200)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id)
    await alice.send(room_id, "a long one")
    parts = split_message(ANSWER, 200)
    assert len(parts) == 3
    await wait_for_whole(alice, bot_id, room_id, parts)
    originals = [m for m in alice.messages_from(bot_id, room_id) if not is_edit(m)]
    # Only the first part is the reply.
    assert ["m.relates_to" in m.content for m in originals] == [True, False, False]


async def test_without_streaming_one_whole_message(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    bot = await start_bot(WritingCore())
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id)
    await alice.send(room_id, "sixty words")
    [answer] = await alice.wait_for_messages(bot_id, room_id, 1)
    assert answer.body == ANSWER
    await asyncio.sleep(0.5)
    assert len(alice.messages_from(bot_id, room_id)) == 1


LONG_REPLY = (
    "Miso is a fine name for a cat. Two meals a day, fresh water, a scratching post and a "
    "high place to sleep will keep her happy; so will a little play every evening."
)


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
async def test_the_real_core_streams_in_a_dm_and_stores_the_answer_once(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness, encrypted: bool
) -> None:
    mnemo.mind.replies.append(LONG_REPLY)
    bot = await start_bot(mnemo.app.core, stream_interval=0.1)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id, encrypted=encrypted)
    await alice.send(room_id, "My cat is called Miso. Any tips?")
    await wait_for_whole(alice, bot_id, room_id, [LONG_REPLY])
    await mnemo.app.writer.drain()
    turns = await mnemo.app.store.read(lambda tx: tx.turns.recent("matrix:dm", limit=10))
    assert [turn.text for turn in turns if turn.role is Role.ASSISTANT] == [LONG_REPLY]
    messages = alice.messages_from(bot_id, room_id)
    assert len(messages) > 1 and all(message.encrypted is encrypted for message in messages)


async def test_the_real_core_streams_in_a_group_room(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.replies.append(LONG_REPLY)
    bot = await start_bot(mnemo.app.core, stream_interval=0.1, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice, bob = await make_person("alice"), await make_person("bob")
    room_id = await open_group(alice, bob, bot_id)
    await alice.send(room_id, "Mnemo, my cat is called Miso. Any tips?")
    await wait_for_whole(bob, bot_id, room_id, [LONG_REPLY])
    assert len(bob.messages_from(bot_id, room_id)) > 1
