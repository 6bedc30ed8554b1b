"""Queued writes survive outages and restarts, keep their order, and apply exactly once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.embedding import FastEmbedEmbedder
from memory.errors import StorageFullError, VectorIndexError
from memory.index import LanceFactIndex
from memory.index.base import IndexedFact
from memory.indexing import reconcile
from memory.llm import ChatMessage, LanguageModelUnavailable, ScriptedLanguageModel
from memory.records import FactEvent
from memory.scope import Scope
from memory.store import EventDraft, FactRepository, PendingWriteRepository, Store
from memory.write import MemoryWriter, WriteSettings
from memory.write.prompts.combined import message_of
from tests.memory.write.helpers import (
    ALICE,
    MESSAGE_TIME,
    active_texts,
    decided,
    extracted,
    pending_count,
)

START = datetime(2026, 11, 29, 12, 0, tzinfo=MESSAGE_TIME.tzinfo)


@dataclass
class ManualClock:
    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def answer_by_message(messages: Sequence[ChatMessage]) -> str:
    """A model that extracts "I live in X" from "I live in X" and adds (no candidates here)."""
    user_text = message_of(messages[-1].content)
    return extracted(user_text) if "New fact" not in user_text else decided((1, "UPDATE", 1))


async def queued(store: Store) -> list[tuple[int, str | None]]:
    later = START + timedelta(days=365)
    rows = await store.read(lambda transaction: transaction.pending.due(later))
    return [(row.attempts, row.last_error) for row in rows]


async def test_outage_then_restart_finishes_the_write_exactly_once(
    tmp_path: Path, embedder: FastEmbedEmbedder
) -> None:
    clock = ManualClock()
    store = await Store.open(tmp_path / "db.sqlite3")
    index = await LanceFactIndex.open(tmp_path / "index", dimension=384)
    down = ScriptedLanguageModel([LanguageModelUnavailable("connection refused")])
    writer = MemoryWriter(store, index, embedder, down, WriteSettings(), clock=clock)
    await writer.accept(ALICE, "I have a cat named Miso", message_time=MESSAGE_TIME)
    await writer.drain()
    await writer.aclose()
    assert await queued(store) == [(1, "LanguageModelUnavailable: connection refused")]
    assert await active_texts(store, ALICE) == []
    await index.aclose()
    await store.aclose()

    # A new process on the same files, with the model back.
    store = await Store.open(tmp_path / "db.sqlite3")
    index = await LanceFactIndex.open(tmp_path / "index", dimension=384)
    up = ScriptedLanguageModel(fallback=answer_by_message)
    writer = MemoryWriter(store, index, embedder, up, WriteSettings(), clock=clock)
    assert await writer.drain() == 0  # still inside the backoff
    assert up.calls == []
    clock.advance(31)
    assert await writer.drain() == 1
    assert await writer.drain() == 0
    assert await active_texts(store, ALICE) == ["I have a cat named Miso"]
    assert await pending_count(store) == 0
    assert len(up.calls) == 1
    await index.aclose()
    await store.aclose()


async def test_backoff_doubles_up_to_the_maximum(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    clock = ManualClock()
    llm = ScriptedLanguageModel(fallback=LanguageModelUnavailable("down"))
    settings = WriteSettings(retry_base_seconds=30, retry_max_seconds=100)
    writer = MemoryWriter(store, index, embedder, llm, settings, clock=clock)
    await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    await writer.drain()
    delays = []
    for _ in range(3):
        (row,) = await store.read(lambda tx: tx.pending.due(datetime.max.replace(tzinfo=UTC)))
        delays.append((row.next_attempt_at - clock.now).total_seconds())
        clock.now = row.next_attempt_at
        assert await writer.drain() == 0
    assert delays == [30, 60, 100]
    assert len(llm.calls) == 4


async def test_wakes_from_intake_and_the_scheduled_retry_together_apply_once(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(fallback=answer_by_message)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings())
    await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    assert await writer.retry_due() == 1  # a second wake while the first is being served
    await writer.drain()
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I have a cat"]
    assert len(llm.calls) == 1


async def test_a_waiting_write_holds_back_later_messages_of_the_person(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    clock = ManualClock()
    llm = ScriptedLanguageModel([LanguageModelUnavailable("down")], fallback=answer_by_message)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings(), clock=clock)
    await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
    await writer.drain()
    await writer.accept(ALICE, "I live in Berlin", message_time=MESSAGE_TIME)
    await writer.drain()
    # Berlin must not be decided before Paris: it waits behind it.
    assert await active_texts(store, ALICE) == []
    clock.advance(31)
    assert await writer.drain() == 2
    assert await active_texts(store, ALICE) == ["I live in Berlin"]


async def test_an_unusable_answer_does_not_block_later_messages(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    llm = ScriptedLanguageModel(["I am sorry, I cannot do that."], fallback=answer_by_message)
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings())
    await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
    await writer.drain()
    await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I have a cat"]
    ((attempts, error),) = await queued(store)
    assert attempts == 1
    assert error is not None and error.startswith("UnusableModelOutput: extraction")


class IndexThatFailsOnWrite(LanceFactIndex):
    """Test double: a LanceDB index whose writes fail, as if the process died after commit."""

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        raise VectorIndexError("simulated crash before the index write")


async def test_index_failure_after_commit_is_repaired_by_reconcile(
    tmp_path: Path, store: Store, embedder: FastEmbedEmbedder
) -> None:
    real = await LanceFactIndex.open(tmp_path / "crash-index", dimension=384)
    failing = IndexThatFailsOnWrite(real._table, real.path)
    llm = ScriptedLanguageModel(fallback=answer_by_message)
    writer = MemoryWriter(store, failing, embedder, llm, WriteSettings())
    await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I have a cat"]
    assert await pending_count(store) == 0  # applied once; not retried
    assert await real.count() == 0

    report = await reconcile(store, real, embedder)

    assert report.missing == 1
    assert await real.count() == 1
    await real.aclose()


async def test_a_failure_inside_the_apply_transaction_applies_nothing(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Simulated full disk on the second fact's event: the first fact must not stay either."""
    clock = ManualClock()
    real_record_event = FactRepository.record_event
    calls = 0

    def record_event_then_fail(self: FactRepository, scope: Scope, draft: EventDraft) -> FactEvent:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise StorageFullError("simulated: the disk is full")
        return real_record_event(self, scope, draft)

    monkeypatch.setattr(FactRepository, "record_event", record_event_then_fail)
    llm = ScriptedLanguageModel(fallback=extracted("I have a cat", "I like chess"))
    writer = MemoryWriter(store, index, embedder, llm, WriteSettings(), clock=clock)
    await writer.accept(ALICE, "I have a cat and I like chess", message_time=MESSAGE_TIME)
    await writer.drain()
    assert await active_texts(store, ALICE) == []
    assert await index.count() == 0
    assert [error for _, error in await queued(store)] == [
        "StorageFullError: simulated: the disk is full"
    ]

    monkeypatch.setattr(FactRepository, "record_event", real_record_event)
    clock.advance(31)
    assert await writer.drain() == 1
    assert await active_texts(store, ALICE) == ["I have a cat", "I like chess"]
    assert await index.count() == 2


async def test_a_store_failure_in_the_background_is_logged_and_the_write_kept(
    store: Store,
    index: LanceFactIndex,
    embedder: FastEmbedEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Test double for a broken disk while reading the queue: nothing is lost, it is logged."""

    def unreadable(self: object, worker: str, **_: object) -> None:
        raise StorageFullError("simulated: cannot read the queue")

    monkeypatch.setattr(PendingWriteRepository, "claim_next", unreadable)
    writer = MemoryWriter(store, index, embedder, ScriptedLanguageModel(), WriteSettings())
    await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    await writer.drain()
    assert "the queue worker could not read the queue; it retries later" in caplog.text
    assert writer.worker.running
    assert await pending_count(store) == 1
    await writer.aclose()
