"""Group commits and replies first on the write path.

Real SQLite, LanceDB and embedder; the model is scripted (an instant model that extracts
each message as it is said and adds it), and hangs where a test needs it to. The index is
wrapped in a spy that counts its writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.index import IndexedFact, LanceFactIndex
from memory.keyed_locks import KeyedLocks
from memory.llm import ChatMessage, ScriptedLanguageModel
from memory.priority import ReplyPriority
from memory.records import FactSource
from memory.scope import Scope
from memory.store import Store
from memory.write import MemoryWriter, WriteSettings, pipeline
from memory.write import group_commit as group_commit_module
from memory.write.group_commit import GroupCommitter
from memory.write.pipeline import MessageInput, Plan, QueueClaim, WriteParts, plan_message
from memory.write.prompts.combined import message_of
from tests.memory.write.gated import GatedLanguageModel, is_extraction, until
from tests.memory.write.helpers import (
    MESSAGE_TIME,
    active_texts,
    decided,
    extracted,
    pending_count,
    seed,
)

PEOPLE = [Scope(f"console:person{n}", "console:dm") for n in range(8)]


def extract_and_add(messages: Sequence[ChatMessage]) -> str:
    text = message_of(messages[-1].content)
    if is_extraction(messages):
        return extracted(text)
    return decided((1, "ADD", None))


class CountingIndex(LanceFactIndex):
    """The real index, counting the calls that write to it (a spy)."""

    upserts: int = 0
    deletes: int = 0

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        if facts:
            self.upserts += 1
        await super().upsert(facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        if fact_ids:
            self.deletes += 1
        await super().delete(fact_ids)


@pytest.fixture
async def counting_index(lance_index: LanceFactIndex) -> CountingIndex:
    """LanceDB's (its upserts are what group commits save): with a SQLite store."""
    lance_index.__class__ = CountingIndex
    assert isinstance(lance_index, CountingIndex)
    return lance_index


async def test_people_writing_at_once_share_commits_and_keep_their_own_facts(
    sqlite_store: Store, counting_index: CountingIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(fallback=extract_and_add)
    store = sqlite_store
    writer = MemoryWriter(store, counting_index, embedder, llm, WriteSettings(worker_concurrency=8))
    said = {
        scope: [f"I own a boat called {scope.owner[-1]}{n}" for n in range(3)] for scope in PEOPLE
    }
    for n in range(3):
        for scope in PEOPLE:
            await writer.accept(scope, said[scope][n], message_time=MESSAGE_TIME)
    writer.start()
    await writer.drain()
    try:
        for scope in PEOPLE:
            assert sorted(await active_texts(store, scope)) == sorted(said[scope])
        assert await pending_count(store) == 0
        messages = len(PEOPLE) * 3
        assert counting_index.upserts < messages
        assert sum(writer._group_commit.group_sizes) == messages
        assert max(writer._group_commit.group_sizes) > 1
    finally:
        await writer.aclose()


async def plan_for(
    parts: WriteParts, store: Store, scope: Scope, text: str, worker: str
) -> tuple[MessageInput, Plan]:
    async with store.transaction() as transaction:
        pending = await transaction.pending.enqueue(
            scope, text, message_time=MESSAGE_TIME, now=MESSAGE_TIME
        )
        claimed = await transaction.pending.claim_next(
            worker,
            now=MESSAGE_TIME,
            until=MESSAGE_TIME.replace(year=2030),
            holds_back=lambda pending: True,
            owner=scope.owner,
        )
    assert claimed is not None and claimed.id == pending.id
    message = MessageInput(scope, text, MESSAGE_TIME, None, QueueClaim(pending.id, worker))
    return message, await plan_message(parts, message)


async def test_a_row_forgotten_meanwhile_applies_nothing_and_its_group_still_commits(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(fallback=extract_and_add)
    parts = WriteParts(store, index, embedder, llm, WriteSettings().pipeline())
    committer = GroupCommitter(parts, KeyedLocks())
    first = await plan_for(parts, store, PEOPLE[0], "I play the cello", "worker-1")
    second = await plan_for(parts, store, PEOPLE[1], "I play the drums", "worker-1")
    async with store.transaction() as transaction:
        await transaction.pending.discard_for_scope(PEOPLE[0])  # "forget all" meanwhile
    outcomes = await asyncio.gather(
        committer.commit(first[0], FactSource.EXTRACTED, first[1]),
        committer.commit(second[0], FactSource.EXTRACTED, second[1]),
    )
    await committer.aclose()
    assert [outcome.completed for outcome in outcomes] == [False, True]
    assert await active_texts(store, PEOPLE[0]) == []
    assert await active_texts(store, PEOPLE[1]) == ["I play the drums"]
    assert await pending_count(store) == 0


async def test_groups_stay_small_while_replies_are_in_progress(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """A group's transaction holds the store's write lock, which replies need: while one is
    in progress a group takes at most ``busy_group`` plans; otherwise up to ``max_group``."""
    llm = ScriptedLanguageModel(fallback=extract_and_add)
    parts = WriteParts(store, index, embedder, llm, WriteSettings().pipeline())
    # Background steps go beside replies at once here: only the groups' sizes are tested.
    priority = ReplyPriority(max_wait_seconds=0)
    committer = GroupCommitter(parts, KeyedLocks(), max_group=32, busy_group=2, priority=priority)
    planned = [
        await plan_for(parts, store, scope, f"I play flute number {n}", "worker-1")
        for n, scope in enumerate(PEOPLE)
    ]

    async def commit_all(plans: Sequence[tuple[MessageInput, Plan]]) -> None:
        await asyncio.gather(
            *(committer.commit(message, FactSource.EXTRACTED, plan) for message, plan in plans)
        )

    try:
        with priority.reply():
            await commit_all(planned[:4])
        during_replies = list(committer.group_sizes)
        await commit_all(planned[4:])
    finally:
        await committer.aclose()
    assert during_replies == [2, 2]
    assert committer.group_sizes[2:] == [4]
    for n, scope in enumerate(PEOPLE):
        assert await active_texts(store, scope) == [f"I play flute number {n}"]


async def test_one_bad_write_fails_alone(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    llm = ScriptedLanguageModel(fallback=extract_and_add)
    parts = WriteParts(store, index, embedder, llm, WriteSettings().pipeline())
    committer = GroupCommitter(parts, KeyedLocks())
    good = await plan_for(parts, store, PEOPLE[0], "I live by the sea", "worker-1")
    bad = await plan_for(parts, store, PEOPLE[1], "I live in the hills", "worker-1")
    real_apply = pipeline.apply_plan

    async def apply_or_break(transaction, parts, message, source, plan):  # type: ignore[no-untyped-def]
        if message.scope == PEOPLE[1]:
            raise RuntimeError("this row cannot be written")
        return await real_apply(transaction, parts, message, source, plan)

    monkeypatch.setattr(pipeline, "apply_plan", apply_or_break)
    monkeypatch.setattr(group_commit_module, "apply_plan", apply_or_break)
    results = await asyncio.gather(
        committer.commit(good[0], FactSource.EXTRACTED, good[1]),
        committer.commit(bad[0], FactSource.EXTRACTED, bad[1]),
        return_exceptions=True,
    )
    await committer.aclose()
    assert not isinstance(results[0], BaseException) and results[0].completed
    assert isinstance(results[1], RuntimeError)
    assert await active_texts(store, PEOPLE[0]) == ["I live by the sea"]
    assert await active_texts(store, PEOPLE[1]) == []
    assert await pending_count(store) == 1  # the bad row stays queued (claimed) for a retry


async def test_queue_model_calls_wait_while_a_reply_is_prepared(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(fallback=extract_and_add)
    priority = ReplyPriority(max_wait_seconds=3600)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings(), priority=priority)
    writer.start()
    try:
        with priority.reply():
            await writer.accept(PEOPLE[0], "I collect stamps", message_time=MESSAGE_TIME)
            await until(lambda: priority.waited_steps >= 1)
            await asyncio.sleep(0.1)
            assert llm.calls == []  # the queue waits for the reply
            assert await pending_count(store) == 1
        await writer.drain()
        assert len(llm.calls) == 1  # the extraction (no candidates: added without a decision)
        assert await active_texts(store, PEOPLE[0]) == ["I collect stamps"]
    finally:
        await writer.aclose()


async def test_remember_inside_a_reply_does_not_wait_for_itself(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = GatedLanguageModel(fallback=extract_and_add)
    # Were its calls queue calls, they would wait a second for the reply, then go.
    priority = ReplyPriority(max_wait_seconds=1)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings(), priority=priority)
    await seed(store, index, embedder, PEOPLE[0], "I own a red bicycle")
    try:
        with priority.reply():
            outcome = await writer.remember(PEOPLE[0], "I own a blue bicycle")
        assert outcome.writes
        assert priority.waited_steps == 0
    finally:
        await writer.aclose()
