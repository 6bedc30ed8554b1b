"""The adapter against a real Synapse, with a recording test double in place of the core."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from adapters.matrix.adapter import FAILURE_NOTICE, PRIVATE_NO_DM_NOTICE
from adapters.matrix.errors import MatrixLoginError
from tests.adapters.matrix.conftest import MakePerson, RecordingCore, StartBot
from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_dm, open_group
from tests.servers.synapse import SynapseServer

pytestmark = pytest.mark.synapse


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


async def test_group_room_flags_mentions_replies_and_commands(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    bob = await make_person("bob")
    room_id = await open_group(alice, bob, bot_id)

    await alice.send(room_id, "bob, mnemonic devices are fun")
    await alice.send(room_id, "Mnemo, what do you know?")
    [first] = await alice.wait_for_messages(bot_id, room_id, 1)
    await alice.send(room_id, "Hey bot", **{"m.mentions": {"user_ids": [bot_id]}})
    await bob.send(
        room_id, "thanks!", **{"m.relates_to": {"m.in_reply_to": {"event_id": first.event_id}}}
    )
    await bob.send(room_id, "!memory list")
    answers = await alice.wait_for_messages(bot_id, room_id, 4)

    flags = [(m.text, m.is_direct, m.mentions_bot, m.reply_to_bot) for m in core.seen]
    assert flags == [
        ("bob, mnemonic devices are fun", False, False, False),
        ("Mnemo, what do you know?", False, True, False),
        ("Hey bot", False, True, False),
        ("thanks!", False, False, True),
        ("!memory list", False, False, False),
    ]
    assert [a.body for a in answers] == [
        "echo: Mnemo, what do you know?",
        "echo: Hey bot",
        "echo: thanks!",
        "echo: !memory list",
    ]
    assert core.seen[4].user_key == f"matrix:{bob.user_id}"


async def test_answer_stays_in_the_thread(start_bot: StartBot, make_person: MakePerson) -> None:
    bot = await start_bot(RecordingCore())
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)
    root = await alice.send(room_id, "start")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 1)

    in_thread = await alice.send(
        room_id,
        "in the thread",
        **{
            "m.relates_to": {
                "rel_type": "m.thread",
                "event_id": root,
                "is_falling_back": True,
                "m.in_reply_to": {"event_id": root},
            }
        },
    )
    answers = await alice.wait_for_messages(bot.adapter.user_id, room_id, 2)

    assert answers[1].content["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": root,
        "m.in_reply_to": {"event_id": in_thread},
        "is_falling_back": False,
    }


async def test_long_answer_is_split_and_only_the_first_part_is_a_reply(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    paragraphs = [f"Paragraph {number} " + "word " * 15 for number in range(6)]
    long_text = "\n\n".join(paragraph.strip() for paragraph in paragraphs)
    bot = await start_bot(RecordingCore(lambda message: long_text), max_message_chars=200)
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)

    sent = await alice.send(room_id, "tell me a lot")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 3)
    await asyncio.sleep(1.0)  # let any further parts arrive before counting them
    parts = alice.messages_from(bot.adapter.user_id, room_id)

    assert len(parts) == 3
    assert all(len(part.body) <= 200 for part in parts)
    assert "\n\n".join(part.body for part in parts) == long_text
    assert parts[0].content["m.relates_to"] == {"m.in_reply_to": {"event_id": sent}}
    assert all("m.relates_to" not in part.content for part in parts[1:])


async def test_edits_and_own_messages_are_not_answered(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)
    original = await alice.send(room_id, "my cat is called Tom")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 1)

    await alice.send(
        room_id,
        "* my cat is called Tim",
        **{
            "m.new_content": {"msgtype": "m.text", "body": "my cat is called Tim"},
            "m.relates_to": {"rel_type": "m.replace", "event_id": original},
        },
    )
    await alice.send(room_id, "after the edit")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 2)

    assert [message.text for message in core.seen] == ["my cat is called Tom", "after the edit"]
    assert [edit.text for edit in core.edits] == ["my cat is called Tim"]


async def test_typing_notice_while_the_core_works(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    bot = await start_bot(RecordingCore(delay_seconds=2.0))
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)

    await alice.send(room_id, "think hard")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 1)

    assert (room_id, bot.adapter.user_id) in alice.typing_seen


async def test_restart_keeps_the_device_and_does_not_answer_what_was_said_while_away(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)
    await alice.send(room_id, "before the restart")
    await alice.wait_for_messages(bot.adapter.user_id, room_id, 1)
    await bot.stop()

    await alice.send(room_id, "while you were away")
    restarted = await start_bot(core)
    await alice.send(room_id, "welcome back")
    answers = await alice.wait_for_messages(bot.adapter.user_id, room_id, 2)

    assert restarted.device_id == bot.device_id
    assert answers[1].body == "echo: welcome back"
    assert [message.text for message in core.seen] == ["before the restart", "welcome back"]
    assert [message.text for message in core.caught_up] == ["while you were away"]


async def test_invites_only_from_allowed_users(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    alice = await make_person("alice")
    mallory = await make_person("mallory")
    core = RecordingCore()
    bot = await start_bot(core, allowed=(alice.user_id,))
    bot_id = bot.adapter.user_id

    rejected_room = await mallory.create_room([bot_id], direct=True)
    accepted_room = await open_dm(alice, bot_id)
    membership = await wait_for_membership(mallory, rejected_room, bot_id, "leave")
    await mallory.send(rejected_room, "hello?")
    await alice.send(accepted_room, "hello")
    await alice.wait_for_messages(bot_id, accepted_room, 1)

    assert membership == "leave"
    assert [message.user_key for message in core.seen] == [f"matrix:{alice.user_id}"]


async def wait_for_membership(person: Person, room_id: str, user_id: str, wanted: str) -> str:
    async with asyncio.timeout(30):
        while True:
            response = await person.client.room_get_state_event(room_id, "m.room.member", user_id)
            membership = getattr(response, "content", {}).get("membership")
            if membership == wanted:
                return wanted
            await asyncio.sleep(0.2)


async def test_private_answer_in_a_group_without_a_dm_is_not_shown_there(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    bot = await start_bot(RecordingCore(lambda message: "your secret list", private=True))
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    bob = await make_person("bob")
    room_id = await open_group(alice, bob, bot_id)

    await alice.send(room_id, "!memory list")
    [notice] = await alice.wait_for_messages(bot_id, room_id, 1)

    assert notice.body == PRIVATE_NO_DM_NOTICE
    assert notice.content["msgtype"] == "m.notice"
    assert all("secret" not in message.body for message in alice.received)


async def test_core_failure_gets_a_notice_and_the_bot_keeps_going(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    bot = await start_bot(RecordingCore(error=RuntimeError("store on fire")))
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot.adapter.user_id)

    await alice.send(room_id, "first")
    await alice.send(room_id, "second")
    answers = await alice.wait_for_messages(bot.adapter.user_id, room_id, 2)

    assert [answer.body for answer in answers] == [FAILURE_NOTICE, FAILURE_NOTICE]


async def test_logged_out_session_stops_the_adapter_with_a_clear_error(
    start_bot: StartBot, synapse: SynapseServer, tmp_path: Path
) -> None:
    bot = await start_bot(RecordingCore())
    token = json.loads((tmp_path / "bot-store" / "session.json").read_text())["access_token"]
    # Logged out elsewhere, as from Element's session list: the bot's own client is not told.
    async with httpx.AsyncClient() as http:
        response = await http.post(
            f"{synapse.url}/_matrix/client/v3/logout",
            headers={"Authorization": f"Bearer {token}"},
            json={},
        )
        response.raise_for_status()

    async with asyncio.timeout(60):
        with pytest.raises(MatrixLoginError, match="no longer accepts the access token"):
            await bot.task
