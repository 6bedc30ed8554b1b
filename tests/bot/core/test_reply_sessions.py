"""What one reply asks of the database: three sessions (docs/benchmarks.md "Load").

The message and its queued write (with the person's pause) in one transaction, recall's facts
and the recent turns in one read, the answer in one: two turns of the store's writer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.orm import Session

from bot.core import ConversationCore, CoreSettings
from bot.messages import IncomingMessage
from memory.embedding import Embedder
from memory.index import VectorIndex
from memory.indexing import index_facts
from memory.llm import ScriptedLanguageModel
from memory.priority import Priority
from memory.recall import Recaller, RecallSettings
from memory.records import NewFact
from memory.store import Store
from memory.store.write_thread import Commit
from memory.write.writer import MemoryWriter, WriteSettings
from tests.bot.core.harness import START, ScriptedMind, reply_calls

T = TypeVar("T")


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
    fact = await store.write(
        lambda transaction: transaction.facts.add(scope, NewFact("A plays the cello"))
    )
    await index_facts(index, embedder, [fact])
    await core.handle(said("I practised for two hours today.", 1))
    sessions: list[str] = []
    run = store.database.run

    def checked_out(*_: Any) -> None:
        sessions.append("session")

    async def counted_turn(job: Callable[[Session, Commit], T], priority: Priority) -> T:
        sessions.append(f"turn for {priority.value}")
        return await run(job, priority)

    store.database.run = counted_turn  # type: ignore[method-assign]
    # The async engine, and on SQLite the readers' and the writer's.
    database = store.database
    engines = [database.engine.sync_engine, database.read_engine, database.write_engine]
    for engine in engines:
        if engine is not None:
            event.listen(engine, "checkout", checked_out)
    try:
        replies = await core.handle(said("My cello teacher was pleased.", 2))
    finally:
        for engine in engines:
            if engine is not None:
                event.remove(engine, "checkout", checked_out)
        del store.database.run
    assert [reply.text for reply in replies] == ["OK."]
    writes = ["turn for reply", "session"]
    if store.database.dialect == "sqlite":
        assert sessions == [*writes, "session", *writes]
    else:
        # The vector search is a query of the same database (pgvector), one more.
        assert sessions == [*writes, "session", "session", *writes]
    prompt = reply_calls(llm)[-1].prompt_text
    assert "A plays the cello" in prompt and "I practised for two hours today." in prompt
    assert await store.read(lambda transaction: transaction.pending.count()) == 2
    await writer.aclose()
