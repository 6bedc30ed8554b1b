"""Write-ahead intake: a message is stored and queued before the model is asked for a reply,
the reply never waits for memory, a store that refuses the message costs a note and not the
answer, and one person's messages and commands take effect in the order they came."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import URL
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from bot.config import Config
from bot.core.core import NOT_SAVED, NOT_SAVED_FULL
from bot.messages import IncomingMessage
from memory.embedding import Embedder, TextKind, Vectors
from memory.llm import ChatMessage
from memory.priority import Priority
from memory.records import Role
from memory.write.prompts import decision
from tests.bot.core.harness import (
    Harness,
    extraction_calls,
    fact,
    make_config,
    open_harness,
    reply_calls,
)
from tests.memory.full_disk import fill_the_disk
from tests.memory.write.gated import is_extraction, until


@pytest.fixture
async def bot(
    tmp_path: Path, embedder: Embedder, database_location: Path | URL
) -> AsyncIterator[Harness]:
    config = make_config(tmp_path / "data", database=database_location)
    harness = await open_harness(tmp_path, embedder, config=config, held=is_extraction)
    yield harness
    harness.llm.open()
    await harness.app.aclose()


def direct(bot: Harness, user: str, text: str, message_id: str | None = None) -> IncomingMessage:
    return IncomingMessage(
        platform="matrix",
        user_key=f"matrix:{user}",
        display_name=user.capitalize(),
        room_key="matrix:dm",
        text=text,
        time=bot.clock.tick(),
        is_direct=True,
        message_id=message_id,
    )


def rows(config: Config, query: str) -> list[tuple[object, ...]]:
    """A separate connection's view of the database: what a crash would leave. (Called from
    inside the model's answer, where the event loop is busy: PostgreSQL is read from a
    thread with a loop of its own.)"""
    if config.storage.database_url is None:
        with sqlite3.connect(config.storage.database_path) as connection:
            return list(connection.execute(query).fetchall())

    async def fetch() -> list[tuple[object, ...]]:
        engine = create_async_engine(config.storage.database, poolclass=NullPool)
        try:
            async with engine.connect() as connection:
                return [tuple(row) for row in await connection.exec_driver_sql(query)]
        finally:
            await engine.dispose()

    with ThreadPoolExecutor(1) as executor:
        return executor.submit(asyncio.run, fetch()).result()


async def test_the_message_is_durable_before_the_reply_is_asked_and_the_reply_does_not_wait(
    bot: Harness,
) -> None:
    database = bot.app.config
    seen_at_reply: list[list[tuple[object, ...]]] = []

    def model(messages: Sequence[ChatMessage]) -> str:
        if not is_extraction(messages) and messages[0].content != decision.SYSTEM_PROMPT:
            seen_at_reply.append(
                rows(
                    database,
                    "SELECT m.text, m.role, p.text FROM messages m "
                    "JOIN pending_writes p ON p.source_message_id = m.platform_message_id",
                )
            )
        return bot.mind(messages)

    bot.llm.fallback = model
    bot.mind.facts["I run marathons."] = [fact("I run marathons", "hobby")]
    replies = await bot.app.core.handle(direct(bot, "alice", "I run marathons.", "$m1"))

    assert [reply.text for reply in replies] == ["OK."]
    assert seen_at_reply == [[("I run marathons.", "user", "I run marathons.")]]
    # The reply came back while the extraction of the same message hung inside the model.
    await until(lambda: bot.llm.waiting == ["I run marathons."])
    bot.llm.open()
    await bot.app.writer.drain()
    scope = direct(bot, "alice", "").scope()
    facts, turns = await bot.app.store.read(
        lambda tx: (tx.facts.list_in_scope(scope), tx.turns.recent("matrix:dm", limit=10))
    )
    assert [(f.text, f.source_message_id) for f in facts] == [("I run marathons", "$m1")]
    person, answer = turns
    assert (person.role, person.platform_message_id, person.answer_to) == (Role.USER, "$m1", None)
    assert (answer.role, answer.text, answer.answer_to) == (Role.ASSISTANT, "OK.", person.id)


async def test_a_full_disk_at_intake_still_answers_and_says_the_message_was_not_saved(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    replies: list[str] = []
    try:
        await fill_the_disk(bot.app.store)
        # Pages have room here and there: long messages use it up within a few.
        for number in range(30):
            replies.append(await bot.say("alice", f"note {number} " + "a long story " * 200))
            if replies[-1] != "OK.":
                break
        turns = await bot.app.store.read(lambda tx: tx.turns.recent("matrix:dm", limit=100))
    finally:
        await bot.app.aclose()
    assert replies[-1] == f"OK.\n\n{NOT_SAVED_FULL}"
    assert all(reply == "OK." for reply in replies[:-1])
    # Every message the person was not warned about was taken in (and learned from).
    taken = [turn.text.split(" ", 2)[:2] for turn in turns if turn.role is Role.USER]
    assert taken == [["note", str(number)] for number in range(len(replies) - 1)]
    assert len(extraction_calls(bot.llm)) == len(replies) - 1
    assert "could not save the message of matrix:alice in matrix:dm to memory" in caplog.text
    assert "free disk space where storage.data_dir is" in caplog.text


@pytest.mark.parametrize("backend", ["sqlite"])  # SQLite's one writer at a time
async def test_a_database_locked_by_another_process_still_answers_with_the_note(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    intruder = sqlite3.connect(bot.app.config.storage.database_path, isolation_level=None)
    try:
        intruder.execute("BEGIN IMMEDIATE")  # holds the write lock, as a second process does
        replies = await bot.app.core.handle(direct(bot, "alice", "I have a cat.", "$m1"))
    finally:
        intruder.execute("ROLLBACK")
        intruder.close()
    assert [reply.text for reply in replies] == [f"OK.\n\n{NOT_SAVED}"]
    assert "database is locked" in caplog.text
    assert "another process holds the database: run one Mnemo per data folder" in caplog.text
    queued, turns = await bot.app.store.read(
        lambda tx: (tx.pending.count(), tx.turns.recent("matrix:dm", limit=10))
    )
    assert queued == 0
    assert turns == []


@pytest.mark.parametrize("backend", ["postgresql"])
async def test_a_table_locked_by_another_transaction_still_answers_with_the_note(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    engine = create_async_engine(bot.app.config.storage.database, poolclass=NullPool)
    try:
        async with engine.begin() as intruder:
            await intruder.exec_driver_sql("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
            replies = await bot.app.core.handle(direct(bot, "alice", "I have a cat.", "$m1"))
    finally:
        await engine.dispose()
    assert [reply.text for reply in replies] == [f"OK.\n\n{NOT_SAVED}"]
    assert "the database is locked: another transaction held" in caplog.text
    assert "end the long transaction that holds it (PostgreSQL)" in caplog.text
    assert await bot.app.store.read(lambda tx: tx.pending.count()) == 0


async def test_commands_and_messages_of_a_person_take_effect_in_the_order_they_came(
    bot: Harness,
) -> None:
    texts = ["!memory pause", "I have a cat.", "!memory resume", "I have a dog."] * 3
    replies = await asyncio.gather(
        *(bot.app.core.handle(direct(bot, "alice", text)) for text in texts)
    )
    assert [reply.text.split()[0] for (reply,) in replies] == [
        "Paused:",
        "OK.",
        "Resumed:",
        "OK.",
    ] * 3
    queued, turns = await bot.app.store.read(
        lambda tx: (
            tx.pending.due(datetime.max.replace(tzinfo=UTC)),
            tx.turns.recent("matrix:dm", limit=100),
        )
    )
    # Every message is kept as conversation; only those sent while learning was on are queued.
    assert [row.text for row in queued] == ["I have a dog."] * 3
    assert [t.text for t in turns if t.role is Role.USER] == ["I have a cat.", "I have a dog."] * 3


async def test_a_message_handed_over_twice_is_answered_but_learned_once(bot: Harness) -> None:
    bot.llm.open()
    bot.mind.facts["I have a cat."] = [fact("I have a cat")]
    message = direct(bot, "bob", "I have a cat.", "$same")
    first = await bot.app.core.handle(message)
    again = await bot.app.core.handle(message)
    await bot.app.writer.drain()
    assert [r.text for r in first] == [r.text for r in again] == ["OK."]
    facts, turns = await bot.app.store.read(
        lambda tx: (tx.facts.list_in_scope(message.scope()), tx.turns.recent("matrix:dm", limit=20))
    )
    assert [f.text for f in facts] == ["I have a cat"]
    assert len([call for call in bot.llm.calls if is_extraction(call.messages)]) == 1
    (person,) = [t for t in turns if t.role is Role.USER]
    assert person.platform_message_id == "$same"
    assert [t.answer_to for t in turns if t.role is Role.ASSISTANT] == [person.id, person.id]
    assert len(reply_calls(bot.llm)) == 2


class WatchingEmbedder:
    """The real model, which notes each text it is asked to embed as a query (test double
    to see when recall's embedding begins)."""

    def __init__(self, inner: Embedder, watched: str) -> None:
        self.inner = inner
        self.watched = watched
        self.queries: list[str] = []
        self.asked = asyncio.Event()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def embed(self, texts: Sequence[str], kind: TextKind = "document") -> Vectors:
        if kind == "query":
            self.queries.extend(texts)
            if self.watched in texts:
                self.asked.set()
        return await self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


async def test_recall_embeds_the_message_while_it_is_taken_in(
    tmp_path: Path, embedder: Embedder
) -> None:
    """A reply waits for the longer of its intake and its recall's embedding, not for both:
    the message is embedded while its intake still waits for the writer, and only once."""
    watching = WatchingEmbedder(embedder, "What is my dog called?")
    bot = await open_harness(tmp_path, watching)
    try:
        message = direct(bot, "alice", "What is my dog called?", "$m1")
        async with bot.app.store.database.writing(Priority.BACKGROUND):
            reply = asyncio.create_task(bot.app.core.handle(message))
            await asyncio.wait_for(watching.asked.wait(), timeout=30)
            assert not reply.done()
        assert [reply.text for reply in await reply] == ["OK."]
        assert watching.queries == ["What is my dog called?"]
    finally:
        await bot.app.aclose()
