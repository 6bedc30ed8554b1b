"""Helpers for write-path tests: scripted model answers, a writer on real parts, and reads."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from memory.embedding import Embedder
from memory.index.base import VectorIndex
from memory.indexing import index_facts
from memory.llm import ScriptedLanguageModel
from memory.records import Action, Actor, Fact, FactEvent, FactSource, FactStatus, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction
from memory.write import MemoryWriter, WriteSettings

ALICE = Scope("console:alice", "console:room1")
ALICE_OTHER_ROOM = Scope("console:alice", "console:room2")
BOB = Scope("console:bob", "console:room1")
MESSAGE_TIME = datetime(2026, 11, 27, 18, 30, tzinfo=UTC)
PARIS = "I live in Paris"
CHESS = "I like chess"

Decision = tuple[int, str, int | None]
InlineFact = tuple[str, str | None, int | None]
# One scripted answer: what the model returns, or what its call raises.
Step = str | BaseException


def extracted(*texts: str, category: str = "other", when: str | None = None) -> str:
    """What a model answers to the extraction prompt."""
    facts = [{"text": text, "category": category, "when": when} for text in texts]
    return json.dumps({"facts": facts})


def decided(*decisions: Decision) -> str:
    """What a model answers to the decision prompt."""
    return json.dumps(
        {"decisions": [{"fact": f, "action": a, "target": t} for f, a, t in decisions]}
    )


def combined(*facts: InlineFact, category: str = "other") -> str:
    """What a model answers to the combined prompt: each fact with its action and target."""
    answers = [
        {"text": text, "category": category, "when": None, "action": action, "target": target}
        for text, action, target in facts
    ]
    return json.dumps({"facts": answers})


@dataclass(frozen=True)
class Case:
    """One branch of the write path, table-driven: alice's known facts, her message, the
    model's answers in order, and what must follow."""

    name: str
    known: tuple[str, ...]
    message: str
    answers: tuple[Step, ...]
    active_after: frozenset[str]
    actions: tuple[Action, ...]
    guards: tuple[str | None, ...]
    llm_calls: int
    queued_after: int = 0


async def check_case(case: Case, store: Store, index: VectorIndex, embedder: Embedder) -> None:
    """Seed, say the message on real parts, and check the end state, events and calls."""
    await seed(store, index, embedder, ALICE, *case.known)
    llm = ScriptedLanguageModel(list(case.answers))
    writer = make_writer(store, index, embedder, llm)

    await say(writer, ALICE, case.message)

    assert set(await active_texts(store, ALICE)) == case.active_after
    events = await pipeline_events(store, ALICE)
    assert tuple(event.final_action for event in events) == case.actions
    assert tuple(event.guard for event in events) == case.guards
    assert len(llm.calls) == case.llm_calls
    assert await pending_count(store) == case.queued_after
    assert not llm.steps, "every scripted answer was used"


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

    def add(transaction: StoreTransaction) -> list[Fact]:
        return [
            transaction.facts.add(
                scope, NewFact(text, source=FactSource.STATED), embedding_model=embedder.model_name
            )
            for text in texts
        ]

    facts = await store.write(add)
    await index_facts(index, embedder, facts)
    return facts


async def say(writer: MemoryWriter, scope: Scope, text: str) -> None:
    await writer.accept(scope, text, message_time=MESSAGE_TIME)
    await writer.drain()


async def active_texts(store: Store, scope: Scope) -> list[str]:
    facts = await store.read(lambda transaction: transaction.facts.list_in_scope(scope))
    return [fact.text for fact in facts]


async def all_facts(store: Store, scope: Scope) -> list[Fact]:
    return await store.read(
        lambda transaction: transaction.facts.list_in_scope(scope, statuses=list(FactStatus))
    )


async def pipeline_events(store: Store, scope: Scope) -> list[FactEvent]:
    events = await store.read(
        lambda transaction: transaction.facts.latest_events(
            scope, actors=[Actor.PIPELINE], limit=100
        )
    )
    return list(reversed(events))


async def pending_count(store: Store) -> int:
    return await store.read(lambda transaction: transaction.pending.count())
