"""Edits, deletions, departures and catch-up through the real core and write path.

Real: the core, the store (SQLite and LanceDB, or PostgreSQL with pgvector: each test runs
on both), the embedder, the queue worker. The LLM's judgement is the
scripted mind (the extraction and decision answers a real model gives, mistakes included).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import URL

from bot.messages import IncomingMessage, MessageDeletion, MessageEdit
from memory.embedding import Embedder
from memory.llm import ChatMessage
from memory.records import Action, Fact, FactStatus
from memory.scope import Scope
from tests.bot.core.harness import Harness, extraction_calls, fact, make_config, open_harness
from tests.bot.core.test_forgetting import files_with, rows_with
from tests.memory.write.gated import is_extraction, until

ROOM = "matrix:!r:x"
ALICE_HERE = Scope("matrix:alice", ROOM)
UPDATE_FIRST = '{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}'
ADD_BY_MISTAKE = '{"decisions": [{"fact": 1, "action": "ADD", "target": null}]}'
GREETING = "Hi, I'm Alice."


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    yield harness
    harness.llm.open()
    await harness.app.aclose()


@pytest.fixture
async def held_bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    """A bot whose model holds the extraction of alice's greeting until ``llm.open()``."""

    def greeting(messages: Sequence[ChatMessage]) -> bool:
        # The extraction only: in a group room the reply's user message is the greeting too.
        return is_extraction(messages) and messages[-1].content == GREETING

    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config, held=greeting)
    yield harness
    harness.llm.open()
    await harness.app.aclose()


async def queue_behind_the_greeting(bot: Harness, text: str, message_id: str) -> None:
    """Alice's greeting, then ``text``: its write waits in the queue behind the held one."""
    await bot.app.core.handle(said(bot, "alice", GREETING, "$m0"))
    await bot.app.core.handle(said(bot, "alice", text, message_id))
    await until(lambda: bot.llm.waiting == [GREETING])


def said(bot: Harness, user: str, text: str, message_id: str) -> IncomingMessage:
    return IncomingMessage(
        platform="matrix",
        user_key=f"matrix:{user}",
        display_name=user.capitalize(),
        room_key=ROOM,
        text=text,
        time=bot.clock.tick(),
        is_direct=False,
        mentions_bot=True,
        message_id=message_id,
    )


async def tell(bot: Harness, user: str, text: str, message_id: str) -> None:
    await bot.app.core.handle(said(bot, user, text, message_id))
    await bot.app.writer.drain()


async def edit(bot: Harness, user: str, message_id: str, text: str, **extra: object) -> bool:
    change = MessageEdit("matrix", f"matrix:{user}", ROOM, message_id, text, bot.clock.tick())
    applied = await bot.app.core.handle_edit(replace(change, **extra))  # type: ignore[arg-type]
    await bot.app.writer.drain()
    return applied


async def delete(bot: Harness, message_id: str, by: str | None) -> bool:
    deleted_by = None if by is None else f"matrix:{by}"
    deletion = MessageDeletion("matrix", ROOM, message_id, deleted_by, bot.clock.tick())
    erased = await bot.app.core.handle_deletion(deletion)
    await bot.app.writer.drain()
    return erased


async def facts(bot: Harness, scope: Scope = ALICE_HERE) -> list[Fact]:
    """Every fact of the scope, whatever its status."""
    return await bot.app.store.read(
        lambda tx: tx.facts.list_in_scope(scope, statuses=tuple(FactStatus))
    )


async def active(bot: Harness, scope: Scope = ALICE_HERE) -> list[str]:
    return [f.text for f in await facts(bot, scope) if f.status is FactStatus.ACTIVE]


async def turn_texts(bot: Harness) -> list[str]:
    turns = await bot.app.store.read(lambda tx: tx.turns.recent(ROOM, limit=50))
    return [turn.text for turn in turns]


# -- edits ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("decision", "old_status", "last_event"),
    [
        (UPDATE_FIRST, FactStatus.SUPERSEDED, (Action.UPDATE, None)),
        # The old words are no longer said: the code deletes what the message alone taught.
        (ADD_BY_MISTAKE, FactStatus.DELETED, (Action.DELETE, "edited_away")),
    ],
    ids=["the model updates", "the model adds instead of updating"],
)
async def test_an_edit_corrects_the_fact_its_message_taught(
    bot: Harness, decision: str, old_status: FactStatus, last_event: tuple[Action, str | None]
) -> None:
    bot.mind.facts["I live in Pari"] = [fact("I live in Pari")]
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    bot.mind.decisions.append(decision)
    await tell(bot, "alice", "I live in Pari", "$m1")
    replies_before = len(bot.llm.calls)

    assert await edit(bot, "alice", "$m1", "I live in Paris")

    assert await active(bot) == ["I live in Paris"]
    [old] = [f for f in await facts(bot) if f.text == "I live in Pari"]
    assert old.status is old_status
    history = await bot.app.writer.history(ALICE_HERE, old.id)
    assert [(e.final_action, e.guard) for e in history][-1] == last_event
    assert "I live in Paris" in await turn_texts(bot)
    assert "I live in Pari" not in await turn_texts(bot)
    # Corrected, not answered: only the extraction and the decision were asked.
    assert len(bot.llm.calls) == replies_before + 2


async def test_an_edit_that_drops_the_fact_removes_it_and_undo_brings_it_back(
    bot: Harness,
) -> None:
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    await tell(bot, "alice", "I live in Paris", "$m1")

    assert await edit(bot, "alice", "$m1", "nice weather today")

    assert await active(bot) == []
    undone = await bot.say("alice", "!memory undo", room="!r:x")
    assert "I live in Paris" in undone
    assert await active(bot) == ["I live in Paris"]


async def test_a_fact_another_message_also_taught_survives_an_edit(bot: Harness) -> None:
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    bot.mind.facts["Paris is where I live"] = [fact("I live in Paris")]
    await tell(bot, "alice", "I live in Paris", "$m1")
    await tell(bot, "alice", "Paris is where I live", "$m2")

    await edit(bot, "alice", "$m1", "nice weather today")

    assert await active(bot) == ["I live in Paris"]


async def test_edits_by_others_too_old_or_unknown_change_nothing(bot: Harness) -> None:
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    await tell(bot, "alice", "I live in Paris", "$m1")
    calls = len(bot.llm.calls)

    assert not await edit(bot, "bob", "$m1", "I live in Berlin")
    late = bot.clock.now + timedelta(hours=25)
    assert not await edit(bot, "alice", "$m1", "I live in Berlin", time=late)
    assert not await edit(bot, "alice", "$never-seen", "I live in Berlin")

    assert await active(bot) == ["I live in Paris"]
    assert "I live in Berlin" not in await turn_texts(bot)
    assert len(bot.llm.calls) == calls


async def test_while_paused_an_edit_changes_only_the_turn(bot: Harness) -> None:
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    await tell(bot, "alice", "I live in Paris", "$m1")
    await bot.say("alice", "!memory pause", room="!r:x")

    assert await edit(bot, "alice", "$m1", "nice weather today")

    assert await active(bot) == ["I live in Paris"]
    assert "nice weather today" in await turn_texts(bot)


async def test_an_edit_of_a_message_still_queued_is_learned_instead_of_the_old_words(
    held_bot: Harness,
) -> None:
    bot = held_bot
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    await queue_behind_the_greeting(bot, "I live in Pari", "$m1")

    assert await bot.app.core.handle_edit(
        MessageEdit("matrix", "matrix:alice", ROOM, "$m1", "I live in Paris", bot.clock.tick())
    )
    bot.llm.open()
    await bot.app.writer.drain()

    extracted = [call.messages[-1].content for call in extraction_calls(bot.llm)]
    assert extracted == [GREETING, "I live in Paris"]
    assert await active(bot) == ["I live in Paris"]


# -- deletions --------------------------------------------------------------------------


async def test_a_deletion_erases_its_turn_and_what_it_alone_taught(
    bot: Harness, tmp_path: Path
) -> None:
    bot.mind.facts["My PIN is 4711"] = [fact("My PIN is 4711")]
    bot.mind.facts["I live in Paris"] = [fact("I live in Paris")]
    bot.mind.facts["Paris is where I live"] = [fact("I live in Paris")]
    bot.mind.replies += ["Noted, but keep it secret!"]
    await tell(bot, "alice", "My PIN is 4711", "$pin")
    await tell(bot, "alice", "I live in Paris", "$m1")
    await tell(bot, "alice", "Paris is where I live", "$m2")

    assert not await delete(bot, "$pin", by="bob")  # a moderator's deletion changes nothing
    assert await active(bot) == ["My PIN is 4711", "I live in Paris"]
    assert await delete(bot, "$pin", by="alice")
    assert await delete(bot, "$m1", by=None)  # Discord does not say: the author's

    assert await active(bot) == ["I live in Paris"]  # also taught by $m2
    assert await rows_with(bot.app.store, "4711") == []
    assert await rows_with(bot.app.store, "keep it secret") == []  # the answer went too
    assert files_with(tmp_path / "data", "4711") == []
    assert "I live in Paris" not in await turn_texts(bot)
    assert not await delete(bot, "$pin", by="alice")  # nothing left the second time


async def test_a_deletion_while_the_write_is_queued_leaves_nothing_to_learn(
    held_bot: Harness,
) -> None:
    bot = held_bot
    bot.mind.facts["My PIN is 4711"] = [fact("My PIN is 4711")]
    await queue_behind_the_greeting(bot, "My PIN is 4711", "$pin")

    deletion = MessageDeletion("matrix", ROOM, "$pin", "matrix:alice", bot.clock.tick())
    assert await bot.app.core.handle_deletion(deletion)
    bot.llm.open()
    await bot.app.writer.drain()

    assert [c.messages[-1].content for c in extraction_calls(bot.llm)] == [GREETING]
    assert await rows_with(bot.app.store, "4711") == []


# -- departures and catch-up ------------------------------------------------------------


async def test_someone_leaving_takes_their_turns_not_their_facts(bot: Harness) -> None:
    bot.mind.facts["I play the cello"] = [fact("I play the cello")]
    await tell(bot, "bob", "I play the cello", "$b1")
    await tell(bot, "alice", "Nice to meet you all", "$a1")

    await bot.app.core.handle_departure(ROOM, "matrix:bob")

    assert await turn_texts(bot) == ["Nice to meet you all", "OK."]
    assert await active(bot, Scope("matrix:bob", ROOM)) == ["I play the cello"]


async def test_catch_up_learns_once_without_answering(bot: Harness) -> None:
    bot.mind.facts["I moved to Lyon"] = [fact("I moved to Lyon")]
    away = said(bot, "alice", "I moved to Lyon", "$away")

    assert await bot.app.core.catch_up(away)
    await bot.app.writer.drain()
    assert not await bot.app.core.catch_up(away)
    # Read again after a restart with the text edited meanwhile: still the same message.
    assert not await bot.app.core.catch_up(replace(away, text="I moved to Lyon!"))
    assert not await bot.app.core.catch_up(said(bot, "alice", "!memory forget all", "$cmd"))
    assert not await bot.app.core.catch_up(
        replace(said(bot, "bob", "hi", "$b"), mentions_bot=False)
    )
    await bot.app.writer.drain()

    assert await active(bot) == ["I moved to Lyon"]
    assert len(extraction_calls(bot.llm)) == 1
    assert await turn_texts(bot) == ["I moved to Lyon"]  # no answer was made
