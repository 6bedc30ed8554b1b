"""Which rooms are DMs, against a real Synapse and the real core.

A DM is a room created as one (``is_direct`` on the bot's invite, kept in the bot's
``m.direct``) with only the bot and that person in it. Its facts (``matrix:dm``) never reach a
room someone else can read, or could read later: a two-member room created without
``is_direct`` is a group room, and so is, for good, a DM that anyone else has been in.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory.records import Fact
from memory.scope import Scope
from tests.adapters.matrix.conftest import MakePerson, StartBot
from tests.adapters.matrix.conversation import Conversation, dm
from tests.adapters.matrix.people import Person
from tests.bot.core.harness import Harness, fact
from tests.servers.synapse import SynapseServer

pytestmark = pytest.mark.synapse

CAT = "I have a cat named Miso."
DOG = "Mnemo, I have a dog named Rex."
QUESTION = "what's my cat called?"


async def facts_of(mnemo: Harness, person: Person, room_key: str) -> list[Fact]:
    scope = Scope(f"matrix:{person.user_id}", room_key)
    return await mnemo.app.store.read(lambda transaction: transaction.facts.list_in_scope(scope))


async def bot_m_direct(synapse: SynapseServer, store: Path, bot_id: str) -> dict[str, Any]:
    """The bot's ``m.direct`` account data as the homeserver holds it."""
    session = json.loads(await asyncio.to_thread((store / "session.json").read_text))
    async with httpx.AsyncClient() as http:
        response = await http.get(
            f"{synapse.url}/_matrix/client/v3/user/{bot_id}/account_data/m.direct",
            headers={"Authorization": f"Bearer {session['access_token']}"},
        )
    if response.status_code == 404:
        return {}
    response.raise_for_status()
    content: dict[str, Any] = response.json()
    return content


async def m_direct_rooms(synapse: SynapseServer, store: Path, bot_id: str) -> set[str]:
    """Every room the bot's ``m.direct`` lists, for anyone."""
    content = await bot_m_direct(synapse, store, bot_id)
    return {room_id for room_ids in content.values() for room_id in room_ids}


async def two_member_room(person: Person, bot_id: str, mnemo: Harness) -> Conversation:
    """A room with only the person and the bot, created without ``is_direct``."""
    room_id = await person.create_room([bot_id])
    await person.wait_for_members(room_id, {person.user_id, bot_id})
    return Conversation(person, room_id, bot_id, mnemo)


async def test_a_room_created_as_a_dm_keeps_dm_facts(
    start_bot: StartBot,
    make_person: MakePerson,
    mnemo: Harness,
    synapse: SynapseServer,
    tmp_path: Path,
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    bot = await start_bot(mnemo.app.core)
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=False)

    await alice.say(CAT)

    assert [f.text for f in await facts_of(mnemo, alice.person, "matrix:dm")] == [
        "I have a cat named Miso"
    ]
    assert [f.room for f in await facts_of(mnemo, alice.person, "matrix:dm")] == ["matrix:dm"]
    # Recorded as Element records a DM, so that it is still one after a restart.
    store = tmp_path / "bot-store"
    assert await bot_m_direct(synapse, store, bot_id) == {alice.person.user_id: [alice.room_id]}


async def test_a_two_member_room_not_created_as_a_dm_is_a_group_room(
    start_bot: StartBot,
    make_person: MakePerson,
    mnemo: Harness,
    synapse: SynapseServer,
    tmp_path: Path,
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.facts[DOG] = [fact("I have a dog named Rex", "possession")]
    mnemo.mind.replies += ["Noted!", "I don't know your cat's name here.", "Rex, noted."]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice_person = await make_person("alice")
    alice_dm = await dm(alice_person, bot_id, mnemo, encrypted=False)
    await alice_dm.say(CAT)
    alice = await two_member_room(alice_person, bot_id, mnemo)
    calls_before = len(mnemo.llm.calls)

    unaddressed = QUESTION
    await alice_person.send(alice.room_id, unaddressed)
    assert await alice.say(f"Mnemo, {QUESTION}") == "I don't know your cat's name here."
    assert "Miso" not in mnemo.last_reply_prompt()
    assert await alice.say(DOG) == "Rex, noted."

    assert all(call.messages[-1].content != unaddressed for call in mnemo.llm.calls)
    assert all("Miso" not in call.prompt_text for call in mnemo.llm.calls[calls_before:])
    # The room is answered in order, so an answer to the unaddressed message would be first.
    messages = await alice_person.wait_for_messages(bot_id, alice.room_id, 2)
    assert [m.body for m in messages] == ["I don't know your cat's name here.", "Rex, noted."]
    assert all("Miso" not in m.body for m in alice_person.messages_from(bot_id, alice.room_id))
    # What Alice tells there belongs to that room, not to her DMs.
    room_facts = await facts_of(mnemo, alice_person, f"matrix:{alice.room_id}")
    assert [f.text for f in room_facts] == ["I have a dog named Rex"]
    dm_facts = await facts_of(mnemo, alice_person, "matrix:dm")
    assert [f.text for f in dm_facts] == ["I have a cat named Miso"]
    store = tmp_path / "bot-store"
    assert await bot_m_direct(synapse, store, bot_id) == {alice_person.user_id: [alice_dm.room_id]}


async def test_a_dm_is_still_one_after_a_restart_that_lost_the_sync_token(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness, tmp_path: Path
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["What a lovely name!", "Your cat is called Miso."]
    bot = await start_bot(mnemo.app.core)
    alice = await dm(await make_person("alice"), bot.adapter.user_id, mnemo, encrypted=False)
    await alice.say(CAT)
    await bot.stop()
    # The whole store goes, sync token included: the next start syncs from scratch as a new
    # device, and only the homeserver's m.direct can tell that the room is a DM.
    await asyncio.to_thread(shutil.rmtree, tmp_path / "bot-store")

    restarted = await start_bot(mnemo.app.core)
    answer = await alice.say(QUESTION)

    assert restarted.device_id != bot.device_id
    assert answer == "Your cat is called Miso."
    assert "has a cat named Miso" in mnemo.last_reply_prompt()


async def test_a_dm_that_gains_a_third_member_is_a_group_room(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["Noted!", "I don't know your cat's name here."]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=False)
    bob = await make_person("bob")
    await alice.say(CAT)

    await alice.person.invite(alice.room_id, bob.user_id)
    await bob.join(alice.room_id)
    await alice.person.wait_for_members(alice.room_id, {alice.person.user_id, bob.user_id})
    await alice.person.send(alice.room_id, QUESTION)
    answer = await alice.say(f"Mnemo, {QUESTION}")

    assert answer == "I don't know your cat's name here."
    assert "Miso" not in mnemo.last_reply_prompt()
    assert all(call.messages[-1].content != QUESTION for call in mnemo.llm.calls)
    # One answer before Bob came, one after: none to the unaddressed question.
    messages = await alice.person.wait_for_messages(bot_id, alice.room_id, 2)
    assert [m.body for m in messages] == ["Noted!", "I don't know your cat's name here."]


async def test_a_dm_that_had_a_third_member_stays_a_group_room(
    start_bot: StartBot,
    make_person: MakePerson,
    mnemo: Harness,
    synapse: SynapseServer,
    tmp_path: Path,
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["Noted!", "I don't know your cat's name here.", "Still no idea here."]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=False)
    bob = await make_person("bob")
    await alice.say(CAT)
    calls_before = len(mnemo.llm.calls)
    store = tmp_path / "bot-store"

    await alice.person.invite(alice.room_id, bob.user_id)
    await bob.join(alice.room_id)
    await alice.person.wait_for_members(alice.room_id, {alice.person.user_id, bob.user_id})
    await bob.leave(alice.room_id)
    # Only Alice and the bot again, but Bob may have read the history and may come back.
    await alice.person.send(alice.room_id, QUESTION)
    assert await alice.say(f"Mnemo, {QUESTION}") == "I don't know your cat's name here."
    assert alice.room_id not in await m_direct_rooms(synapse, store, bot_id)

    await bot.stop()
    await start_bot(mnemo.app.core, display_name="Mnemo")
    await alice.person.send(alice.room_id, QUESTION)
    assert await alice.say(f"Mnemo, {QUESTION}") == "Still no idea here."

    assert all(call.messages[-1].content != QUESTION for call in mnemo.llm.calls)
    assert all("Miso" not in call.prompt_text for call in mnemo.llm.calls[calls_before:])
    # The room is answered in order, so an answer to an unaddressed message would come first.
    messages = await alice.person.wait_for_messages(bot_id, alice.room_id, 3)
    assert [m.body for m in messages] == [
        "Noted!",
        "I don't know your cat's name here.",
        "Still no idea here.",
    ]
    assert all("Miso" not in m.body for m in alice.person.messages_from(bot_id, alice.room_id))
    assert alice.room_id not in await m_direct_rooms(synapse, store, bot_id)
