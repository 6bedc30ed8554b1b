"""The adapter against a real Synapse, with a recording test double in place of the core."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from tests.adapters.matrix.conftest import RecordingCore, StartBot
from tests.adapters.matrix.people import Person

pytestmark = pytest.mark.synapse

MakePerson = Callable[..., Awaitable[Person]]


async def open_dm(person: Person, bot_user_id: str, *, encrypted: bool = False) -> str:
    room_id = await person.create_room([bot_user_id], direct=True, encrypted=encrypted)
    await person.wait_for_members(room_id, {person.user_id, bot_user_id})
    return room_id


async def test_dm_message_is_answered_as_a_reply(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore(lambda message: f"**Hello** {message.display_name}")
    bot = await start_bot(core)
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)

    sent = await alice.send(room_id, "hi there")
    [answer] = await alice.wait_for_messages(bot.adapter.user_id, room_id, 1)

    assert answer.content["m.relates_to"] == {"m.in_reply_to": {"event_id": sent}}
    assert answer.content["formatted_body"].startswith("<p><strong>Hello</strong>")
    [seen] = core.seen
    assert seen.is_direct
    assert seen.platform == "matrix"
    assert seen.user_key == f"matrix:{alice.user_id}"
    assert seen.room_key == f"matrix:{room_id}"
    assert seen.text == "hi there"
    assert seen.message_id == sent
