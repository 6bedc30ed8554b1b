"""Issue 17 end to end on Matrix: edits, redactions and messages sent while the bot was
stopped, through a real Synapse, the adapter and the REAL core and write path.

Everything is real (Synapse, matrix-nio clients, SQLite, LanceDB, all-MiniLM-L6-v2, the queue
worker) except the LLM's judgement: the scripted mind answers as a real model would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from adapters.matrix.adapter import EDIT_REACTION
from memory.records import FactStatus
from memory.scope import Scope
from tests.adapters.matrix.conftest import MakePerson, StartBot
from tests.adapters.matrix.conversation import dm
from tests.adapters.matrix.people import Person
from tests.adapters.matrix.rooms import open_group
from tests.bot.core.harness import Harness, extraction_calls, fact
from tests.bot.core.test_forgetting import files_with, rows_with
from tests.memory.write.gated import until

pytestmark = pytest.mark.synapse

UPDATE_FIRST = '{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}'


async def facts_of(mnemo: Harness, person: Person) -> list[tuple[str, FactStatus]]:
    scope = Scope(f"matrix:{person.user_id}", "matrix:dm")
    found = await mnemo.app.store.read(
        lambda tx: tx.facts.list_in_scope(scope, statuses=tuple(FactStatus))
    )
    return [(f.text, f.status) for f in found]


async def active_of(mnemo: Harness, person: Person) -> list[str]:
    return [text for text, status in await facts_of(mnemo, person) if status is FactStatus.ACTIVE]


async def settled(mnemo: Harness, check: Callable[[], Awaitable[bool]]) -> None:
    """Until the queue worker has learned what ``check`` waits for."""

    async def learned() -> bool:
        await mnemo.app.writer.drain()
        return await check()

    await until(learned)


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
async def test_editing_pari_to_paris_leaves_one_fact_and_removing_it_is_undoable(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness, encrypted: bool
) -> None:
    mnemo.mind.facts["I live in Pari"] = [fact("I live in Pari", "location")]
    mnemo.mind.facts["I live in Paris"] = [fact("I live in Paris", "location")]
    mnemo.mind.decisions.append(UPDATE_FIRST)
    bot = await start_bot(mnemo.app.core)
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=encrypted)
    await alice.say("I live in Pari")
    original = alice.last_sent

    await alice.person.edit(alice.room_id, original, "I live in Paris")
    assert await alice.person.wait_for_reaction(bot_id, alice.room_id, original) == EDIT_REACTION

    async def corrected() -> bool:
        return await active_of(mnemo, alice.person) == ["I live in Paris"]

    await settled(mnemo, corrected)
    assert ("I live in Pari", FactStatus.SUPERSEDED) in await facts_of(mnemo, alice.person)
    # Not answered again: the only answer in the room is the one to the first message.
    assert len(alice.person.messages_from(bot_id, alice.room_id)) == 1

    await alice.person.edit(alice.room_id, original, "never mind")

    async def removed() -> bool:
        return await active_of(mnemo, alice.person) == []

    await settled(mnemo, removed)
    assert "I live in Paris" in await alice.say("!memory undo")
    assert await active_of(mnemo, alice.person) == ["I live in Paris"]


async def test_a_redaction_erases_the_fact_it_alone_taught_and_its_turn_for_good(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness, tmp_path: Path
) -> None:
    mnemo.mind.facts["My locker code is 4711"] = [fact("My locker code is 4711")]
    mnemo.mind.facts["I have a cat named Miso"] = [fact("I have a cat named Miso")]
    mnemo.mind.replies += ["I'll keep locker 4711 in mind.", "Hello Miso!"]
    bot = await start_bot(mnemo.app.core)
    alice = await dm(await make_person("alice"), bot.adapter.user_id, mnemo, encrypted=True)
    await alice.say("My locker code is 4711")
    locker = alice.last_sent
    await alice.say("I have a cat named Miso")
    assert files_with(tmp_path / "data", "4711")  # it is there before

    await alice.person.redact(alice.room_id, locker)

    async def erased() -> bool:
        return await active_of(mnemo, alice.person) == ["I have a cat named Miso"]

    await settled(mnemo, erased)
    await until(lambda: not files_with(tmp_path / "data", "4711"))
    assert await rows_with(mnemo.app.store, "4711") == []  # the turn and the answer too
    assert await rows_with(mnemo.app.store, "Miso") != []


async def test_what_was_said_while_stopped_is_learned_once_also_in_an_encrypted_dm(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts["I play the cello"] = [fact("I play the cello", "hobby")]
    mnemo.mind.facts["My sister is called Ines"] = [fact("My sister is called Ines", "family")]
    mnemo.mind.facts["I live in Lyon"] = [fact("I live in Lyon", "location")]
    bot = await start_bot(mnemo.app.core)
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=True)
    bob = await dm(await make_person("bob"), bot_id, mnemo, encrypted=False)
    await alice.say("Hello!")
    await bob.say("Hello!")
    await bot.stop()

    await alice.person.send(alice.room_id, "I play the cello")
    await alice.person.send(alice.room_id, "My sister is called Ines")
    await bob.person.send(bob.room_id, "I live in Lyon")
    second = await start_bot(mnemo.app.core)

    async def learned() -> bool:
        alice_knows = await active_of(mnemo, alice.person)
        return len(alice_knows) == 2 and await active_of(mnemo, bob.person) == ["I live in Lyon"]

    await settled(mnemo, learned)
    assert sorted(await active_of(mnemo, alice.person)) == [
        "I play the cello",
        "My sister is called Ines",
    ]
    # Learned, not answered: each DM still holds only the answer to "Hello!".
    assert len(alice.person.messages_from(bot_id, alice.room_id)) == 1
    assert len(bob.person.messages_from(bot_id, bob.room_id)) == 1

    await second.stop()
    third = await start_bot(mnemo.app.core)
    assert await alice.say("Still there?") == "OK."
    await third.stop()
    extracted = [call.messages[-1].content for call in extraction_calls(mnemo.llm)]
    for text in ("I play the cello", "My sister is called Ines", "I live in Lyon"):
        assert extracted.count(text) == 1, text
    assert len(await facts_of(mnemo, alice.person)) == 2


async def test_an_edit_or_redaction_by_someone_else_changes_nothing(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts["Mnemo, I live in Paris"] = [fact("I live in Paris", "location")]
    mnemo.mind.facts["Mnemo, I play the cello"] = [fact("I play the cello", "hobby")]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice = await make_person("alice")
    bob = await make_person("bob")
    room_id = await open_group(alice, bob, bot_id)
    alice_said = await alice.send(room_id, "Mnemo, I live in Paris")
    await alice.wait_for_messages(bot_id, room_id, 1)
    bob_said = await bob.send(room_id, "Mnemo, I play the cello")
    await alice.wait_for_messages(bot_id, room_id, 2)

    # Bob sends an edit of Alice's message (Synapse lets him; clients hide it), and Alice,
    # who made the room (a moderator), removes Bob's message.
    await bob.edit(room_id, alice_said, "Mnemo, I live in Berlin")
    await alice.redact(room_id, bob_said)
    # A room's events are handled in order: once this is answered, both were handled.
    await alice.send(room_id, "Mnemo, still there?")
    await alice.wait_for_messages(bot_id, room_id, 3)
    await mnemo.app.writer.drain()

    async def active_in_room(person: Person) -> list[str]:
        scope = Scope(f"matrix:{person.user_id}", f"matrix:{room_id}")
        facts = await mnemo.app.store.read(lambda tx: tx.facts.list_in_scope(scope))
        return [fact.text for fact in facts]

    assert await active_in_room(alice) == ["I live in Paris"]
    assert await active_in_room(bob) == ["I play the cello"]
    recent = await mnemo.app.store.read(lambda tx: tx.turns.recent(f"matrix:{room_id}", limit=20))
    turns = [turn.text for turn in recent]
    assert "Mnemo, I live in Paris" in turns and "Mnemo, I play the cello" in turns
    assert not any("Berlin" in turn for turn in turns)
    assert all(reacts_to != alice_said for _, _, reacts_to, _ in alice.reactions)
    assert not any("Berlin" in call.messages[-1].content for call in extraction_calls(mnemo.llm))
