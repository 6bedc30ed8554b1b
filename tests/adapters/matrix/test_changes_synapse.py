"""Edits, redactions, departures, reply chains and catch-up, as the adapter hands them to the
core: a real Synapse and real matrix-nio clients, with a recording double for the core."""

from __future__ import annotations

import asyncio
from typing import NamedTuple

import pytest
from nio import RoomPutStateResponse

from adapters.matrix.adapter import EDIT_REACTION
from bot.messages import CatchUpBounds
from tests.adapters.matrix.conftest import MakePerson, RecordingCore, RunningBot, StartBot
from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_dm, open_group

pytestmark = pytest.mark.synapse


class BotAndTwoPeople(NamedTuple):
    core: RecordingCore
    bot: RunningBot
    alice: Person
    bob: Person


async def bot_and_two_people(start_bot: StartBot, make_person: MakePerson) -> BotAndTwoPeople:
    """The bot, addressed as "Mnemo", around a recording core; alice and bob logged in."""
    core = RecordingCore()
    bot = await start_bot(core, display_name="Mnemo")
    return BotAndTwoPeople(core, bot, await make_person("alice"), await make_person("bob"))


async def test_an_edit_goes_to_the_core_as_a_correction_and_gets_a_reaction_not_an_answer(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    room_id = await open_dm(alice, bot_id, encrypted=True)
    original = await alice.send(room_id, "I live in Pari")
    await alice.wait_for_messages(bot_id, room_id, 1)

    await alice.edit(room_id, original, "I live in Paris")
    key = await alice.wait_for_reaction(bot_id, room_id, original)
    await alice.send(room_id, "after the edit")
    await alice.wait_for_messages(bot_id, room_id, 2)

    assert key == EDIT_REACTION
    [edit] = core.edits
    assert (edit.message_id, edit.text, edit.user_key) == (
        original,
        "I live in Paris",
        f"matrix:{alice.user_id}",
    )
    assert edit.room_key == f"matrix:{room_id}"
    assert [message.text for message in core.seen] == ["I live in Pari", "after the edit"]


async def test_a_redaction_says_who_redacted(start_bot: StartBot, make_person: MakePerson) -> None:
    core, bot, alice, bob = await bot_and_two_people(start_bot, make_person)
    bot_id = bot.adapter.user_id
    room_id = await open_group(alice, bob, bot_id)
    said = await alice.send(room_id, "Mnemo, my PIN is 1234")
    await alice.wait_for_messages(bot_id, room_id, 1)

    await alice.redact(room_id, said)
    await core.wait_until(lambda: len(core.deletions) == 1)

    [deletion] = core.deletions
    assert (deletion.message_id, deletion.deleted_by, deletion.room_key) == (
        said,
        f"matrix:{alice.user_id}",
        f"matrix:{room_id}",
    )


async def test_leaving_a_room_is_a_departure(start_bot: StartBot, make_person: MakePerson) -> None:
    core, bot, alice, bob = await bot_and_two_people(start_bot, make_person)
    bot_id = bot.adapter.user_id
    room_id = await open_group(alice, bob, bot_id)

    await bob.leave(room_id)
    await core.wait_until(lambda: bool(core.departures))

    assert core.departures == [(f"matrix:{room_id}", f"matrix:{bob.user_id}")]


async def test_a_reply_brings_the_replied_to_messages_along(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core, bot, alice, bob = await bot_and_two_people(start_bot, make_person)
    bot_id = bot.adapter.user_id
    room_id = await open_group(alice, bob, bot_id)
    idea = await bob.send(room_id, "let's hike up Mont Ventoux on Saturday")
    doubt = await alice.reply(room_id, idea, "isn't it too steep?")

    await bob.reply(room_id, doubt, "Mnemo, what do you think?")
    await alice.wait_for_messages(bot_id, room_id, 1)

    [asked] = core.seen[-1:]
    assert [(q.message_id, q.text, q.from_bot) for q in asked.quoted] == [
        (doubt, "isn't it too steep?", False),
        (idea, "let's hike up Mont Ventoux on Saturday", False),
    ]
    assert asked.quoted[0].author_name == alice.client.rooms[room_id].user_name(alice.user_id)
    assert asked.shared_since is None  # history visibility "shared": everyone reads it all


async def test_with_joined_visibility_nothing_from_before_the_newest_member_is_shared(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core, bot, alice, bob = await bot_and_two_people(start_bot, make_person)
    bot_id = bot.adapter.user_id
    room_id = await alice.create_room([bot_id])
    await alice.wait_for_members(room_id, {alice.user_id, bot_id})
    response = await alice.client.room_put_state(
        room_id, "m.room.history_visibility", {"history_visibility": "joined"}
    )
    assert isinstance(response, RoomPutStateResponse), response
    secret = await alice.send(room_id, "before Bob: the surprise is a puppy")
    await alice.invite(room_id, bob.user_id)
    await bob.join(room_id)
    await bob.wait_for_members(room_id, {alice.user_id, bob.user_id, bot_id})

    await bob.reply(room_id, secret, "Mnemo, what is this about?")
    await bob.wait_for_messages(bot_id, room_id, 1)

    asked = core.seen[-1]
    assert asked.shared_since is not None
    # Bob could not read the message he replied to (a crafted reply): it is not context.
    assert asked.quoted == ()


async def test_what_was_said_while_away_is_caught_up_once_not_answered(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    _, bot, alice, bob = await bot_and_two_people(start_bot, make_person)
    bot_id = bot.adapter.user_id
    dm_room = await open_dm(alice, bot_id, encrypted=True)
    room_id = await open_group(alice, bob, bot_id)
    kept = await alice.send(dm_room, "before the stop")
    await alice.wait_for_messages(bot_id, dm_room, 1)
    await bot.stop()

    away = [await alice.send(dm_room, f"while away {number}") for number in range(12)]
    await alice.send(room_id, "bob, this is not for the bot")
    mention = await bob.send(room_id, "Mnemo, I moved to Lyon")
    await alice.edit(dm_room, kept, "before the stop, edited")
    await alice.redact(dm_room, away[0])
    second_core = RecordingCore()
    await start_bot(second_core, display_name="Mnemo")
    await second_core.wait_until(lambda: len(second_core.deletions) == 1)
    await alice.send(dm_room, "back again")
    answers = await alice.wait_for_messages(bot_id, dm_room, 2)

    assert answers[-1].body == "echo: back again"
    # Rooms catch up side by side, each in its own order.
    caught = [(m.message_id, m.text, m.is_direct) for m in second_core.caught_up]
    in_dm = [(event_id, text) for event_id, text, is_direct in caught if is_direct]
    # The redacted one has no text left; the gap was longer than one sync (limited timeline).
    assert in_dm == [(event_id, f"while away {n}") for n, event_id in enumerate(away) if n > 0]
    assert (mention, "Mnemo, I moved to Lyon", False) in caught
    assert len(caught) == len(in_dm) + 1
    assert [(e.message_id, e.text) for e in second_core.edits] == [
        (kept, "before the stop, edited")
    ]
    assert [d.message_id for d in second_core.deletions] == [away[0]]
    assert [m.text for m in second_core.seen] == ["back again"]

    third_core = RecordingCore()
    third = await start_bot(third_core)
    await alice.send(dm_room, "once more")
    await alice.wait_for_messages(bot_id, dm_room, 3)
    await asyncio.sleep(0.5)
    assert third_core.caught_up == [] and third_core.edits == []
    await third.stop()


async def test_catch_up_keeps_the_newest_messages_within_the_bound(
    start_bot: StartBot, make_person: MakePerson
) -> None:
    core = RecordingCore()
    bot = await start_bot(core)
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    dm_room = await open_dm(alice, bot_id)
    await alice.send(dm_room, "hello")
    await alice.wait_for_messages(bot_id, dm_room, 1)
    await bot.stop()

    for number in range(8):
        await alice.send(dm_room, f"message {number}")
    later = RecordingCore()
    await start_bot(later, catch_up=CatchUpBounds(hours=24, messages_per_room=3))
    await later.wait_until(lambda: len(later.caught_up) == 3)
    await asyncio.sleep(0.5)

    assert [m.text for m in later.caught_up] == ["message 5", "message 6", "message 7"]
