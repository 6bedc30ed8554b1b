"""Helpers for write-path tests: scripted model answers, a writer on real parts, and reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memory.embedding import Embedder
from memory.index.base import VectorIndex
from memory.indexing import index_facts
from memory.llm import ScriptedLanguageModel
from memory.records import Actor, Fact, FactEvent, FactSource, FactStatus, NewFact
from memory.scope import Scope
from memory.store import Store
from memory.write import MemoryWriter, WriteSettings

ALICE = Scope("console:alice", "console:room1")
ALICE_OTHER_ROOM = Scope("console:alice", "console:room2")
BOB = Scope("console:bob", "console:room1")
MESSAGE_TIME = datetime(2026, 11, 27, 18, 30, tzinfo=UTC)

Decision = tuple[int, str, int | None]


def extracted(*texts: str, category: str = "other", when: str | None = None) -> str:
    """What a model answers to the extraction prompt."""
    facts = [{"text": text, "category": category, "when": when} for text in texts]
    return json.dumps({"facts": facts})


def decided(*decisions: Decision) -> str:
    """What a model answers to the decision prompt."""
    return json.dumps(
        {"decisions": [{"fact": f, "action": a, "target": t} for f, a, t in decisions]}
    )


def make_writer(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    llm: ScriptedLanguageModel,
    settings: WriteSettings | None = None,
) -> MemoryWriter:
    return MemoryWriter(store, index, embedder, llm, settings or WriteSettings())


async def seed(
    store: Store, index: VectorIndex, embedder: Embedder, scope: Scope, *texts: str
) -> list[Fact]:
    """Facts already known before the test, in SQLite and the index."""
    async with store.transaction() as transaction:
        facts = [
            await transaction.facts.add(
                scope, NewFact(text, source=FactSource.STATED), embedding_model=embedder.model_name
            )
            for text in texts
        ]
    await index_facts(index, embedder, facts)
    return facts


async def say(writer: MemoryWriter, scope: Scope, text: str) -> None:
    await writer.accept(scope, text, message_time=MESSAGE_TIME)
    await writer.drain()


async def active_texts(store: Store, scope: Scope) -> list[str]:
    async with store.transaction() as transaction:
        return [fact.text for fact in await transaction.facts.list_in_scope(scope)]


async def all_facts(store: Store, scope: Scope) -> list[Fact]:
    async with store.transaction() as transaction:
        return await transaction.facts.list_in_scope(scope, statuses=list(FactStatus))


async def pipeline_events(store: Store, scope: Scope) -> list[FactEvent]:
    async with store.transaction() as transaction:
        events = await transaction.facts.latest_events(scope, actors=[Actor.PIPELINE], limit=100)
    return list(reversed(events))


async def pending_count(store: Store) -> int:
    async with store.transaction() as transaction:
        return await transaction.pending.count()
