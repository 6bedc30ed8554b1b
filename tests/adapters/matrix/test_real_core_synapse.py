"""Issue 6 end to end: Synapse, the Matrix adapter and the REAL core.

Everything is real (Synapse, matrix-nio clients, SQLite, LanceDB, all-MiniLM-L6-v2, the
writer and recaller) except the LLM's judgement, which is the scripted test double
(:class:`tests.bot.core.harness.ScriptedMind`) answering as a real model would.
"""

from __future__ import annotations

import json

import pytest

from adapters.matrix.adapter import PRIVATE_ELSEWHERE_NOTICE
from tests.adapters.matrix.conftest import MakePerson, StartBot
from tests.adapters.matrix.conversation import Conversation, dm
from tests.adapters.matrix.rooms import open_group
from tests.bot.core.harness import Harness, fact, reply_calls

pytestmark = pytest.mark.synapse

CAT = "I have a cat named Miso."
NOTHING = "I don't remember anything about you here"


@pytest.mark.parametrize("encrypted", [False, True], ids=["plain", "encrypted"])
async def test_dm_fact_is_used_later_listed_and_forgotten(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness, encrypted: bool
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["What a lovely name!", "Your cat is called **Miso**."]
    bot = await start_bot(mnemo.app.core)
    alice = await dm(await make_person("alice"), bot.adapter.user_id, mnemo, encrypted=encrypted)

    assert await alice.say(CAT) == "What a lovely name!"
    assert await alice.say("What's my cat called?") == "Your cat is called **Miso**."
    assert "has a cat named Miso" in mnemo.last_reply_prompt()
    answer = alice.person.messages_from(bot.adapter.user_id, alice.room_id)[-1]
    assert answer.encrypted is encrypted
    assert "<strong>Miso</strong>" in answer.content["formatted_body"]

    listing = await alice.say("!memory list")
    assert "#1 I have a cat named Miso" in listing
    assert (await alice.say("!memory export")).startswith("Here is everything I hold")
    [exported] = await alice.person.wait_for_files(bot.adapter.user_id, alice.room_id, 1)
    assert exported.body.startswith("mnemo-memory-") and exported.body.endswith(".json")
    assert ("file" in exported.content) is encrypted
    document = json.loads(await alice.person.download_file(exported))
    assert [f["text"] for f in document["facts"]] == ["I have a cat named Miso"]
    assert await alice.say("!memory forget 1") == "Forgotten for good: #1."
    assert NOTHING in await alice.say("!memory list")


async def test_group_room_answers_when_addressed_and_never_shows_dm_facts(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["Noted!", "I don't know your cat's name here.", "No idea, Bob."]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice_person = await make_person("alice")
    bob_person = await make_person("bob")
    alice_dm = await dm(alice_person, bot_id, mnemo, encrypted=False)
    await alice_dm.say(CAT)

    room_id = await open_group(alice_person, bob_person, bot_id)
    alice = Conversation(alice_person, room_id, bot_id, mnemo)
    bob = Conversation(bob_person, room_id, bot_id, mnemo)

    unaddressed = "bob, my cat did something funny today"
    await alice_person.send(room_id, unaddressed)
    answer = await alice.say("Mnemo, what's my cat called?")
    assert answer == "I don't know your cat's name here."
    assert "Miso" not in mnemo.last_reply_prompt()
    assert all(call.messages[-1].content != unaddressed for call in mnemo.llm.calls)

    assert await alice.say("!memory list") == PRIVATE_ELSEWHERE_NOTICE
    private = await alice_person.wait_for_messages(bot_id, alice_dm.room_id, 2)
    assert NOTHING in private[-1].body

    assert await bob.say("Mnemo, what's my cat called?") == "No idea, Bob."
    assert "Miso" not in mnemo.last_reply_prompt()
    # The room is answered in order, so an answer to the unaddressed message would be first.
    group_messages = await alice_person.wait_for_messages(bot_id, room_id, 3)
    assert [m.body for m in group_messages] == [
        "I don't know your cat's name here.",
        PRIVATE_ELSEWHERE_NOTICE,
        "No idea, Bob.",
    ]


async def test_second_user_cannot_see_the_first_users_facts(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts[CAT] = [fact("I have a cat named Miso", "possession")]
    mnemo.mind.replies += ["What a lovely name!", "I don't know of any cat of yours."]
    bot = await start_bot(mnemo.app.core)
    bot_id = bot.adapter.user_id
    alice = await dm(await make_person("alice"), bot_id, mnemo, encrypted=False)
    bob = await dm(await make_person("bob"), bot_id, mnemo, encrypted=False)

    await alice.say(CAT)
    assert NOTHING in await bob.say("!memory list")
    assert await bob.say("What's my cat called?") == "I don't know of any cat of yours."
    assert "Miso" not in mnemo.last_reply_prompt()
    # Alice's fact #1 behaves for Bob exactly like an id that does not exist.
    assert await bob.say("!memory forget 1") == (
        "I have no fact #1 about you here. See !memory list for the numbers."
    )
    assert "#1 I have a cat named Miso" in await alice.say("!memory list")


async def test_a_group_answer_can_use_another_persons_earlier_message(
    start_bot: StartBot, make_person: MakePerson, mnemo: Harness
) -> None:
    mnemo.mind.facts["Mnemo, I'm scared of heights."] = [fact("I am scared of heights")]
    mnemo.mind.replies += [
        "Noted, Alice.",
        "Sounds like a plan, Bob!",
        "Mont Ventoux is steep and exposed: with your fear of heights, maybe not.",
        "Then a picnic by the lake suits you better.",
    ]
    bot = await start_bot(mnemo.app.core, display_name="Mnemo")
    bot_id = bot.adapter.user_id
    alice_person = await make_person("alice")
    bob_person = await make_person("bob")
    room_id = await open_group(alice_person, bob_person, bot_id)
    alice = Conversation(alice_person, room_id, bot_id, mnemo)
    bob = Conversation(bob_person, room_id, bot_id, mnemo)

    await alice.say("Mnemo, I'm scared of heights.")
    await bob.say("Mnemo, let's all hike up Mont Ventoux on Saturday!")
    answer = await alice.say("Mnemo, what do you think of Bob's idea, with my fear of heights?")

    assert answer.startswith("Mont Ventoux is steep")
    system, last = reply_calls(mnemo.llm)[-1].messages
    bob_name = bob_person.client.rooms[room_id].user_name(bob_person.user_id)
    bob_said = "Mnemo, let's all hike up Mont Ventoux on Saturday!"
    assert f'- {bob_name} wrote: "{bob_said}"' in system.content.split("\n")
    assert last.content.endswith("what do you think of Bob's idea, with my fear of heights?")
    alice_name = alice_person.client.rooms[room_id].user_name(alice_person.user_id)
    assert f"- {alice_name} is scared of heights" in system.content

    # Carol talks to Bob, not to the bot; Alice replies to her and asks the bot.
    carol_said = await bob_person.send(room_id, "Carol says: a picnic by the lake instead?")
    await alice.say("Mnemo, what about this?", **reply_to(carol_said))
    prompt = reply_calls(mnemo.llm)[-1].system_text
    assert "The message replies to these earlier messages" in prompt
    assert f"- {bob_name} (" in prompt and "a picnic by the lake instead?" in prompt


def reply_to(event_id: str) -> dict[str, object]:
    return {"m.relates_to": {"m.in_reply_to": {"event_id": event_id}}}
