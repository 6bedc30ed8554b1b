"""Encrypted rooms: matrix-nio with vodozemac on both sides, against a real Synapse."""

from __future__ import annotations

import uuid

import pytest
from nio import Api

from adapters.matrix.adapter import UNDECRYPTABLE_NOTICE
from tests.adapters.matrix.conftest import MakePerson, RecordingCore, StartBot
from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_dm

pytestmark = pytest.mark.synapse


async def test_encrypted_dm_is_decrypted_and_answered_encrypted(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id, encrypted=True)

    await alice.send(room_id, "my secret is safe with you")
    [answer] = await alice.wait_for_messages(bot_id, room_id, 1)

    assert [message.text for message in core.seen] == ["my secret is safe with you"]
    assert answer.encrypted, "the answer must arrive as an m.room.encrypted event"
    assert answer.body == "echo: my secret is safe with you"


async def send_undecryptable(person: Person, room_id: str) -> str:
    """An m.room.encrypted event for a Megolm session nobody ever shared, sent raw so that
    matrix-nio does not encrypt it a second time."""
    content = {
        "algorithm": "m.megolm.v1.aes-sha2",
        "ciphertext": "AwgAEnAcrVV0c2VsZXNzIGNpcGhlcnRleHQ",
        "sender_key": person.client.olm.account.identity_keys["curve25519"],
        "session_id": "unknownsession" + uuid.uuid4().hex,
        "device_id": person.client.device_id,
    }
    method, path, data = Api.room_send(
        person.client.access_token, room_id, "m.room.encrypted", content, uuid.uuid4().hex
    )
    response = await person.client.send(method, path, data)
    body = await response.json()
    event_id: str = body["event_id"]
    return event_id


async def test_undecryptable_message_gets_a_notice(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id, encrypted=True)

    broken = await send_undecryptable(alice, room_id)
    [notice] = await alice.wait_for_messages(bot_id, room_id, 1)

    assert notice.body == UNDECRYPTABLE_NOTICE
    assert notice.content["msgtype"] == "m.notice"
    assert notice.content["m.relates_to"] == {"m.in_reply_to": {"event_id": broken}}
    assert core.seen == []


async def test_the_bot_s_device_keys_are_on_the_server_once_it_says_it_is_ready(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    """A new device's keys go up before the bot is ready: a message encrypted for a room
    before they are there is never readable by the bot."""
    alice = await make_person("alice")
    bot = await start_bot(RecordingCore())
    method, path, data = Api.keys_query(alice.client.access_token, {bot.adapter.user_id})
    response = await alice.client.send(method, path, data)
    devices = (await response.json())["device_keys"].get(bot.adapter.user_id, {})
    assert bot.device_id in devices
