"""The core keeps answering when a part of memory fails, and says why in the log."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from sqlalchemy import text

from bot.core import MEMORY_APOLOGY, ConversationCore, CoreSettings
from bot.core.core import EMPTY_ANSWER, NOT_SAVED, STORAGE_FULL_APOLOGY
from bot.messages import IncomingMessage
from memory.embedding import Embedder, OllamaEmbedder
from memory.index import LanceFactIndex
from memory.llm import ScriptedLanguageModel
from memory.recall import Recaller, RecallSettings
from memory.store import Store, StoreTransaction
from memory.write.writer import MemoryWriter, WriteSettings
from tests.bot.core.harness import START, ScriptedMind, open_harness, reply_calls
from tests.memory.full_disk import fill_the_disk


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_recall_failure_answers_without_memories(
    store: Store,
    index: LanceFactIndex,
    embedder: Embedder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # The read path's embedder is an Ollama server that is not running.
    unreachable = OllamaEmbedder("all-minilm", host=f"http://127.0.0.1:{closed_port()}")
    # The worker's extraction may run before or after the reply: answer by the kind of call.
    llm = ScriptedLanguageModel(fallback=ScriptedMind(replies=["Hello!"]).answer)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings())
    core = ConversationCore(
        CoreSettings(),
        store=store,
        writer=writer,
        recaller=Recaller(store, index, unreachable, RecallSettings()),
        llm=llm,
    )
    message = IncomingMessage("console", "console:a", "A", "console:dm", "hi there", START, True)
    later = IncomingMessage("console", "console:a", "A", "console:dm", "still there?", START, True)
    try:
        replies = await core.handle(message)
        await core.handle(later)
        await writer.drain()
    finally:
        await unreachable.aclose()
    assert [reply.text for reply in replies] == ["Hello!"]
    assert "recall failed" in caplog.text and "answering without memories" in caplog.text
    assert "not reachable" in caplog.text
    assert "You do not know anything about A yet." in reply_calls(llm)[0].prompt_text
    # The recent turns, read with recall's facts when it works, are read alone when it fails.
    assert "hi there" in reply_calls(llm)[1].prompt_text


async def drop_table(store: Store, table: str) -> None:
    """Break one table of the real database, as a damaged or foreign file would be."""

    def drop(tx: StoreTransaction) -> None:
        tx.session.execute(text(f"DROP TABLE {table}"))

    await store.write(drop)


async def test_broken_turn_storage_still_answers(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    bot.mind.replies.append("Hi Alice!")
    try:
        await drop_table(bot.app.store, "messages")
        assert await bot.say("alice", "hello") == f"Hi Alice!\n\n{NOT_SAVED}"
    finally:
        await bot.app.aclose()
    assert "could not save the message of matrix:alice in matrix:dm to memory" in caplog.text
    assert "run `mnemo doctor` to check the database" in caplog.text
    assert "could not read the turns of matrix:alice" in caplog.text


async def test_broken_fact_storage_gets_a_short_apology(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    try:
        await drop_table(bot.app.store, "fact_events")
        await drop_table(bot.app.store, "facts")
        assert await bot.say("alice", "!memory list") == MEMORY_APOLOGY
        assert await bot.say("alice", "remember that I like figs") == MEMORY_APOLOGY
    finally:
        await bot.app.aclose()
    assert "memory failed for matrix:alice in matrix:dm" in caplog.text
    assert "no such table: facts" in caplog.text


async def test_a_full_disk_is_said_plainly_and_changes_nothing(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    replies: list[str] = []
    try:
        # Each verse resembles the last: the model is asked, and keeps it as a new fact.
        bot.mind.decisions += ['{"decisions": [{"fact": 1, "action": "ADD", "target": null}]}'] * 30
        await fill_the_disk(bot.app.store)
        # Pages still have room here and there; long facts use it up within a few messages.
        for number in range(30):
            verse = f"verse {number} " + "my favourite poem goes like this " * 90
            replies.append(await bot.say("alice", f"remember that {verse}"))
            if replies[-1] == STORAGE_FULL_APOLOGY:
                break
        listing = await bot.say("alice", "!memory list")
    finally:
        await bot.app.aclose()
    assert replies[-1] == STORAGE_FULL_APOLOGY
    kept = len(replies) - 1
    assert all(reply.startswith("Got it") for reply in replies[:-1])
    assert f"verse {kept - 1} " in listing if kept else "verse" not in listing
    assert f"verse {kept} " not in listing
    assert "free disk space where storage.data_dir is" in caplog.text


async def test_an_empty_answer_from_the_model_is_not_sent_as_silence(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    bot = await open_harness(tmp_path, embedder)
    bot.mind.replies.append("  \n ")
    try:
        assert await bot.say("alice", "hello") == EMPTY_ANSWER
    finally:
        await bot.app.aclose()
    assert "answered" in caplog.text and "with empty text" in caplog.text
