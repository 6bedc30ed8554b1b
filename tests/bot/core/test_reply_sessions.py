"""What one reply asks of the database: three sessions (issue 16, docs/benchmarks.md "Load").

The message and its queued write (with the person's pause) in one transaction, recall's facts
and the recent turns in one read, the answer in one. Through the async engine each statement
is a round trip to SQLite's thread and back through the event loop, which 50 people at once
share; so on SQLite the two writes run whole in one call each (memory/store/one_trip.py).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from bot.core import ConversationCore, CoreSettings
from bot.messages import IncomingMessage
from memory.embedding import Embedder
from memory.index import VectorIndex
from memory.indexing import index_facts
from memory.llm import ScriptedLanguageModel
from memory.recall import Recaller, RecallSettings
from memory.records import NewFact
from memory.store import Store
from memory.store.one_trip import ThreadWriter
from memory.write.writer import MemoryWriter, WriteSettings
from tests.bot.core.harness import START, ScriptedMind, reply_calls


def said(text: str, number: int) -> IncomingMessage:
    return IncomingMessage(
        "console", "console:a", "A", "console:dm", text, START, True, message_id=f"m{number}"
    )


async def test_a_reply_takes_three_database_sessions_and_reads_facts_and_turns_in_one(
    store: Store, index: VectorIndex, embedder: Embedder
) -> None:
    llm = ScriptedLanguageModel(fallback=ScriptedMind().answer)
    # This process only queues: no queue work shares the database while a reply is counted.
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings(apply_queued=False))
    recaller = Recaller(store, index, embedder, RecallSettings())
    core = ConversationCore(CoreSettings(), store=store, writer=writer, recaller=recaller, llm=llm)
    scope = said("", 0).scope()
    async with store.transaction() as transaction:
        fact = await transaction.facts.add(scope, NewFact("A plays the cello"))
    await index_facts(index, embedder, [fact])
    await core.handle(said("I practised for two hours today.", 1))
    sessions: dict[str, int] = {"async engine": 0, "in one call": 0}

    def counter(kind: str) -> Any:
        def checked_out(*_: Any) -> None:
            sessions[kind] += 1

        return checked_out

    engines = {"async engine": store.database.engine.sync_engine}
    if isinstance(store.database.one_trip, ThreadWriter):
        engines["in one call"] = store.database.one_trip.engine
    listeners = {kind: counter(kind) for kind in engines}
    for kind, engine in engines.items():
        event.listen(engine, "checkout", listeners[kind])
    try:
        replies = await core.handle(said("My cello teacher was pleased.", 2))
    finally:
        for kind, engine in engines.items():
            event.remove(engine, "checkout", listeners[kind])
    assert [reply.text for reply in replies] == ["OK."]
    if store.database.dialect == "sqlite":
        # The intake and the answer run whole on SQLite's writer thread, one call each.
        assert sessions == {"async engine": 1, "in one call": 2}
    else:
        # The vector search is a query of the same database (pgvector), one more.
        assert sessions == {"async engine": 4, "in one call": 0}
    prompt = reply_calls(llm)[-1].prompt_text
    assert "A plays the cello" in prompt and "I practised for two hours today." in prompt
    async with store.read() as transaction:
        assert await transaction.pending.count() == 2
    await writer.aclose()
