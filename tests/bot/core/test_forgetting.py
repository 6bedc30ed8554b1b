"""Forgetting for good, through the core: after ``forget <n>`` and ``forget all`` the words
are in no row of any table, in no byte of the data folder, and in no later prompt; a write in
flight when ``forget all`` is confirmed leaves nothing behind."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import URL, String, select

from bot.messages import IncomingMessage
from memory.embedding import Embedder
from memory.llm import LanguageModelUnavailable
from memory.records import Action, Actor, Fact, FactStatus
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.store.migrations.backup import backup_path, backup_sqlite
from memory.store.schema import Base
from tests.bot.core.harness import Harness, fact, make_config, open_harness
from tests.memory.write.gated import is_extraction, until

TABLES = ("facts", "fact_events", "messages", "pending_writes")
ALICE_DM = Scope("matrix:alice", "matrix:dm")


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config)
    yield harness
    harness.llm.open()
    await harness.app.aclose()


async def rows_with(store: Store, word: str) -> list[tuple[str, str]]:
    """(table, column) of every row that has ``word`` in any text column of the memory."""

    def find(tx: StoreTransaction) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for table in Base.metadata.sorted_tables:
            if table.name not in TABLES:
                continue
            for column in table.columns:
                if isinstance(column.type, String):
                    query = select(table).where(column.contains(word, autoescape=True))
                    hits = tx.session.execute(query).all()
                    found += [(table.name, column.name)] * len(hits)
        return found

    return await store.read(find)


def files_with(directory: Path, word: str) -> list[Path]:
    """Every file under ``directory`` with ``word`` in any byte."""
    needle = word.encode()
    return [path for path in directory.rglob("*") if path.is_file() and needle in path.read_bytes()]


async def fact_id(bot: Harness, scope: Scope, text: str) -> int:
    facts = await bot.app.store.read(lambda tx: tx.facts.list_in_scope(scope))
    (found,) = [f for f in facts if f.text == text]
    return found.id


async def test_forget_one_fact_erases_its_versions_events_and_source_turns(bot: Harness) -> None:
    data = bot.app.config.storage.data_dir
    locker = "My locker code is 44170917 ZEBRA"
    bot.mind.facts["My locker code is 44170917 ZEBRA."] = [fact(locker), fact(locker)]
    bot.mind.replies.append("Noted: 44170917 ZEBRA.")
    await bot.say("alice", "My locker code is 44170917 ZEBRA.")
    bot.mind.facts["I have a cat named Miso."] = [fact("I have a cat named Miso")]
    await bot.say("alice", "I have a cat named Miso.")
    bot.mind.facts["My locker code is now 99820536 OKAPI."] = [
        fact("My locker code is 99820536 OKAPI")
    ]
    bot.mind.decisions.append('{"decisions": [{"fact": 1, "action": "UPDATE", "target": 1}]}')
    await bot.say("alice", "My locker code is now 99820536 OKAPI.")
    bot.mind.facts["My locker code is 5550 WALRUS."] = [fact("My locker code is 5550 WALRUS")]
    await bot.say("bob", "My locker code is 5550 WALRUS.")
    newest = await fact_id(bot, ALICE_DM, "My locker code is 99820536 OKAPI")
    assert len(await rows_with(bot.app.store, "ZEBRA")) >= 5  # facts, events, turns

    assert await bot.say("alice", f"!memory forget {newest}") == f"Forgotten for good: #{newest}."

    # Eight digits: a message without a platform id gets a random hex id, where a
    # four-digit code turned up by chance (once in a CI run).
    for word in ("ZEBRA", "44170917", "OKAPI", "99820536"):
        assert await rows_with(bot.app.store, word) == [], word
        assert files_with(data, word) == [], word
    # What else Alice said, and Bob's locker, are untouched.
    assert ("facts", "text") in await rows_with(bot.app.store, "WALRUS")
    assert ("messages", "text") in await rows_with(bot.app.store, "Miso")
    miso = await fact_id(bot, ALICE_DM, "I have a cat named Miso")
    history = await bot.say("alice", f"!memory history {miso}")
    assert "I have a cat named Miso" in history
    bot.mind.replies.append("Hello!")
    await bot.say("alice", "hello")
    prompt = bot.last_reply_prompt()
    assert "Miso" in prompt
    assert not any(word in prompt for word in ("ZEBRA", "44170917", "OKAPI", "99820536"))


async def test_a_forget_deletes_the_copies_made_before_schema_upgrades(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    if bot.app.store.database.dialect != "sqlite":
        pytest.skip("SQLite's own copies: PostgreSQL's backups are the operator's")
    data = bot.app.config.storage.data_dir
    bot.mind.facts["My bank PIN is 8812 LYCHEE."] = [fact("My bank PIN is 8812 LYCHEE")]
    await bot.say("alice", "My bank PIN is 8812 LYCHEE.")
    database = bot.app.config.storage.database_path
    copy = backup_path(database, "0003", "0004")
    await backup_sqlite(database, copy)  # what an upgrade leaves beside the database
    assert copy in files_with(data, "LYCHEE")

    pin = await fact_id(bot, ALICE_DM, "My bank PIN is 8812 LYCHEE")
    assert await bot.say("alice", f"!memory forget {pin}") == f"Forgotten for good: #{pin}."

    assert files_with(data, "LYCHEE") == []
    assert not copy.exists()
    assert f"deleted the pre-upgrade copy {copy}: a forget erased facts" in caplog.text


async def test_forget_all_erases_facts_events_turns_and_queued_writes_of_the_scope(
    bot: Harness,
) -> None:
    data = bot.app.config.storage.data_dir
    bot.mind.facts["My passphrase is TANGERINE-42."] = [fact("My passphrase is TANGERINE-42")]
    bot.mind.replies.append("I will remember TANGERINE-42.")
    await bot.say("alice", "My passphrase is TANGERINE-42.")
    # An answer the model botched (kept as the guard's event) and a write waiting out an
    # outage (kept in the queue, with its error).
    bot.mind.raw_extractions["PERSIMMON-7 is my backup."] = "Sure! PERSIMMON-7, noted."
    await bot.say("alice", "PERSIMMON-7 is my backup.")
    bot.mind.raw_extractions["My locker is QUINCE-9."] = LanguageModelUnavailable("QUINCE-9?")
    await bot.say("alice", "My locker is QUINCE-9.")
    bot.mind.facts["My team code is GUAVA-3."] = [fact("My team code is GUAVA-3")]
    await bot.say("alice", "My team code is GUAVA-3.", room="!team:x")
    bot.mind.facts["My passphrase is APRICOT-5."] = [fact("My passphrase is APRICOT-5")]
    await bot.say("bob", "My passphrase is APRICOT-5.")
    secrets = ("TANGERINE", "PERSIMMON", "QUINCE")
    assert {table for s in secrets for table, _ in await rows_with(bot.app.store, s)} == set(TABLES)

    assert (await bot.say("alice", "!memory forget all")).startswith("This erases the one fact")
    done = await bot.say("alice", "!memory forget all confirm")
    assert done == "Done: I forgot the one fact about you here."

    for word in secrets:
        assert await rows_with(bot.app.store, word) == [], word
        assert files_with(data, word) == [], word
    events, queued = await bot.app.store.read(
        lambda tx: (tx.facts.latest_events(ALICE_DM, actors=[Actor.USER]), tx.pending.count())
    )
    (audit,) = events
    assert queued == 0
    assert (audit.final_action, audit.old_text, audit.new_text) == (Action.FORGET, None, None)
    for word in ("GUAVA", "APRICOT"):
        assert ("facts", "text") in await rows_with(bot.app.store, word)
    await bot.say("alice", "hello")
    assert not any(word in bot.last_reply_prompt() for word in secrets)


def direct(bot: Harness, user: str, text: str) -> IncomingMessage:
    return IncomingMessage(
        platform="matrix",
        user_key=f"matrix:{user}",
        display_name=user,
        room_key="matrix:dm",
        text=text,
        time=bot.clock.tick(),
        is_direct=True,
    )


@pytest.mark.parametrize("moment", ["at once", "while the model extracts"])
async def test_forget_all_right_after_a_message_leaves_no_fact_for_twenty_people(
    tmp_path: Path, embedder: Embedder, moment: str
) -> None:
    bot = await open_harness(tmp_path, embedder, held=is_extraction)
    people = [f"person{number}" for number in range(20)]
    try:
        for person in people:
            await bot.say(person, "remember that I like tea")
            asked = await bot.say(person, "!memory forget all")
            assert asked.startswith("This erases the one fact")
            bot.mind.facts[f"My code is {person}-SECRET."] = [fact(f"My code is {person}-SECRET")]
        messages = [direct(bot, p, f"My code is {p}-SECRET.") for p in people]
        confirms = [direct(bot, p, "!memory forget all confirm") for p in people]
        if moment == "at once":
            pairs = [(m, c) for m, c in zip(messages, confirms, strict=True)]
            replies = await asyncio.gather(
                *(bot.app.core.handle(m) for pair in pairs for m in pair)
            )
            answers = replies[1::2]
        else:
            await asyncio.gather(*(bot.app.core.handle(m) for m in messages))
            await until(lambda: len(bot.llm.waiting) == 1)  # one background call at a time
            answers = await asyncio.gather(*(bot.app.core.handle(c) for c in confirms))
        assert [reply.text for (reply,) in answers] == [
            "Done: I forgot the one fact about you here."
        ] * len(people)
        bot.llm.open()
        await bot.app.writer.drain()

        def left_behind(tx: StoreTransaction) -> tuple[dict[str, list[Fact]], int]:
            facts = {
                person: tx.facts.list_in_scope(
                    Scope(f"matrix:{person}", "matrix:dm"), statuses=list(FactStatus)
                )
                for person in people
            }
            return facts, tx.pending.count()

        facts, queued = await bot.app.store.read(left_behind)
        assert facts == {person: [] for person in people}
        assert queued == 0
        assert await rows_with(bot.app.store, "SECRET") == []
    finally:
        bot.llm.open()
        await bot.app.aclose()
