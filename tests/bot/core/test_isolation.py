"""Privacy end to end: two people in one room, one person in two rooms and a DM.

No reply prompt and no command output ever holds another scope's facts, and another scope's
fact id reads exactly like an id that does not exist. A group room's turns are shared with
everyone there (that is the conversation), but never a DM's, and never another room's.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.core.third_person import about
from bot.messages import IncomingMessage, MessageDeletion, MessageEdit
from bot.room_transcript import TRANSCRIPT_HEADING
from memory.embedding import Embedder
from memory.llm import ChatMessage
from memory.scope import ScopeMode
from tests.bot.core.harness import Harness, fact, make_config, open_harness, reply_calls

ROOM_R = "!r:x"
ROOM_S = "!s:x"
# (user, room, message, fact): room None is the DM.
TOLD = [
    ("alice", ROOM_R, "I'm allergic to peanuts.", "I am allergic to peanuts"),
    ("bob", ROOM_R, "I play the cello.", "I play the cello"),
    ("alice", ROOM_S, "I work at Acme.", "I work at Acme"),
    ("alice", None, "My bank is Northbank.", "My bank is Northbank"),
]
QUESTION = "Do you remember my peanuts, cello, Acme or Northbank?"
SECRETS = {told[3] for told in TOLD}


def ids_in(text: str) -> set[int]:
    return {int(number) for number in re.findall(r"#(\d+)", text)}


async def tell_everything(bot: Harness) -> dict[str, int]:
    for user, room, message, fact_text in TOLD:
        bot.mind.facts[message] = [fact(fact_text)]
        await bot.say(user, message, room=room)
    facts = await bot.app.store.read(lambda tx: tx.facts.admin_active_facts())
    return {f.text: f.id for f in facts}


def shown(fact: str, owner: str) -> str:
    """How a recalled fact of ``owner`` appears in the reply prompt."""
    rewritten = about(fact, owner.capitalize())
    assert rewritten is not None, fact
    return f"- {rewritten}"


def leaked(text: str, allowed: set[str]) -> set[str]:
    """The secrets in ``text`` as told, or as listed about either person."""
    return {
        secret
        for secret in SECRETS - allowed
        if secret in text or any(f"{about(secret, name)}" in text for name in ("Alice", "Bob"))
    }


def parts(messages: Sequence[ChatMessage]) -> tuple[str, str]:
    """(The system messages without the group room's transcript, the conversation: the
    transcript's lines and the dialogue's messages.)"""
    system = "\n".join(m.content for m in messages if m.role == "system")
    dialogue = [m for m in messages[1:-1] if m.role != "system"]
    before, _, after = system.partition(TRANSCRIPT_HEADING)
    transcript, blank, rest = after.partition("\n\n")
    return before + blank + rest, "\n".join([transcript, *(m.content for m in dialogue)])


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    yield harness
    await harness.app.aclose()


@pytest.mark.parametrize(
    ("user", "room", "own"),
    [
        ("alice", ROOM_R, "I am allergic to peanuts"),
        ("bob", ROOM_R, "I play the cello"),
        ("alice", ROOM_S, "I work at Acme"),
        ("alice", None, "My bank is Northbank"),
    ],
)
async def test_prompts_and_commands_hold_only_the_callers_scope(
    bot: Harness, user: str, room: str | None, own: str
) -> None:
    await tell_everything(bot)
    # A question near every secret (cosine 0.22-0.45), so only the scope keeps them out.
    await bot.say(user, QUESTION, room=room)
    notes, conversation = parts(reply_calls(bot.llm)[-1].messages)
    assert shown(own, user) in notes
    assert leaked(notes, {own}) == set()
    # The turns: a group room's, by anyone there; in a DM only the person's own.
    said_here = {told[3] for told in TOLD if told[1] == room} if room else {own}
    assert leaked(conversation, said_here) == set()

    outputs = [
        await bot.say(user, command, room=room)
        for command in (
            "!memory list",
            "!memory search peanuts cello Acme bank",
            "!memory search cello",
            "!memory search Northbank",
        )
    ]
    export = (await bot.send(user, "!memory export", room=room))[0].attachments[0].content
    for output in [*outputs, export.decode()]:
        assert leaked(output, {own}) == set(), output
    assert [f["text"] for f in json.loads(export)["facts"]] == [own]
    assert own in outputs[0]


async def test_another_scopes_fact_id_is_not_found(bot: Harness) -> None:
    ids = await tell_everything(bot)
    unknown = max(ids.values()) + 100
    for command in ("forget", "history"):
        missing = await bot.say("alice", f"!memory {command} {unknown}", room=ROOM_R)
        for secret, fact_id in ids.items():
            if secret == "I am allergic to peanuts":
                continue
            reply = await bot.say("alice", f"!memory {command} {fact_id}", room=ROOM_R)
            assert reply == missing.replace(f"#{unknown}", f"#{fact_id}")
            assert secret not in reply
    assert len(await bot.app.store.read(lambda tx: tx.facts.admin_active_facts())) == 4


async def test_autocomplete_offers_only_the_callers_facts(bot: Harness) -> None:
    ids = await tell_everything(bot)
    message = IncomingMessage(
        platform="matrix",
        user_key="matrix:alice",
        display_name="Alice",
        room_key=f"matrix:{ROOM_R}",
        text="",
        time=bot.clock.tick(),
        is_direct=False,
    )
    everything = await bot.app.core.fact_choices(message, "")
    assert everything == [
        (
            ids["I am allergic to peanuts"],
            f"#{ids['I am allergic to peanuts']} I am allergic to peanuts",
        )
    ]
    assert await bot.app.core.fact_choices(message, "cello") == []
    assert await bot.app.core.fact_choices(message, str(ids["I play the cello"])) == []


async def test_a_group_rooms_turns_are_shared_there_and_dm_turns_never_leave_the_dm(
    bot: Harness,
) -> None:
    await bot.say("bob", "My locker code is 4711.", room=ROOM_R)
    await bot.say("carol", "My locker code is 9999.")  # Carol's DM shares the "matrix:dm" key
    await bot.say("alice", "My PIN is 1234.")  # Alice's own DM
    await bot.say("carol", "My bike code is 5555.", room=ROOM_S)

    await bot.say("alice", "What's Bob's locker code?", room=ROOM_R)
    in_room = bot.last_reply_prompt()
    assert '- Bob wrote: "My locker code is 4711."' in in_room
    assert "9999" not in in_room and "1234" not in in_room and "5555" not in in_room

    await bot.say("alice", "What's my locker code?")
    in_dm = bot.last_reply_prompt()
    assert "1234" in in_dm
    assert "4711" not in in_dm and "9999" not in in_dm and "5555" not in in_dm

    await bot.say("carol", "Remind me of my code?")
    assert "My locker code is 9999." in bot.last_reply_prompt()
    assert "1234" not in bot.last_reply_prompt()


async def test_user_mode_follows_the_person_but_never_brings_dm_facts_to_rooms(
    tmp_path: Path, embedder: Embedder
) -> None:
    config = make_config(tmp_path / "data").model_copy(
        update={
            "memory": make_config(tmp_path).memory.model_copy(update={"scope_mode": ScopeMode.USER})
        }
    )
    bot = await open_harness(tmp_path, embedder, config=config)
    try:
        await tell_everything(bot)
        await bot.say("alice", QUESTION, room=ROOM_S)
        prompt = reply_calls(bot.llm)[-1].prompt_text
        assert shown("I am allergic to peanuts", "alice") in prompt
        assert shown("I work at Acme", "alice") in prompt
        assert leaked(prompt, {"I am allergic to peanuts", "I work at Acme"}) == set()
        help_text = await bot.say("alice", "!memory help", room=ROOM_S)
        assert "It follows you across rooms" in help_text
        listing = await bot.say("alice", "!memory list", room=ROOM_S)
        assert "Northbank" not in listing and "cello" not in listing
        await bot.say("alice", QUESTION)
        # From the DM, all of Alice's facts are visible; Bob's never.
        dm_prompt = bot.last_reply_prompt()
        assert leaked(dm_prompt, SECRETS - {"I play the cello"}) == set()
        assert all(shown(own, "alice") in dm_prompt for own in SECRETS - {"I play the cello"})
    finally:
        await bot.app.aclose()


async def test_nobody_edits_or_deletes_someone_elses_message(bot: Harness) -> None:
    told = {"$r": (ROOM_R, "I'm allergic to peanuts."), "$dm": (None, "My bank is Northbank.")}
    bot.mind.facts["I'm allergic to peanuts."] = [fact("I am allergic to peanuts")]
    bot.mind.facts["My bank is Northbank."] = [fact("My bank is Northbank")]
    for message_id, (room, text) in told.items():
        message = IncomingMessage(
            platform="matrix",
            user_key="matrix:alice",
            display_name="Alice",
            room_key=f"matrix:{room or '!alice-dm:x'}",
            text=text,
            time=bot.clock.tick(),
            is_direct=room is None,
            mentions_bot=True,
            message_id=message_id,
        )
        await bot.app.core.handle(message)
        await bot.app.writer.drain()

    for message_id in told:
        # Bob, in the room or in a DM of his own, names Alice's message.
        for room_key in (f"matrix:{ROOM_R}", "matrix:!bob-dm:x"):
            edit = MessageEdit(
                "matrix", "matrix:bob", room_key, message_id, "nothing", bot.clock.tick()
            )
            deletion = MessageDeletion(
                "matrix", room_key, message_id, "matrix:bob", bot.clock.tick()
            )
            assert not await bot.app.core.handle_edit(edit)
            assert not await bot.app.core.handle_deletion(deletion)
    await bot.app.writer.drain()

    active, in_room, in_dm = await bot.app.store.read(
        lambda tx: (
            tx.facts.admin_active_facts(),
            tx.turns.recent(f"matrix:{ROOM_R}", limit=10),
            tx.turns.recent("matrix:dm", limit=10),
        )
    )
    kept = {f.text for f in active}
    turns = [t.text for t in [*in_room, *in_dm]]
    assert kept == {"I am allergic to peanuts", "My bank is Northbank"}
    assert "nothing" not in turns and set(text for _, text in told.values()) <= set(turns)
