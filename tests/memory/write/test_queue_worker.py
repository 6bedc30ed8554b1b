"""The queue worker: claims, leases, restarts, per-person order and bounded concurrency.

Real SQLite, LanceDB and embedder; the model is scripted, and hangs where a test needs it to
(:class:`GatedLanguageModel`). "Killed" here means a writer that is never closed and whose
claim is left behind, as a process killed mid-write leaves it; the real kill -9 runs in
tests/faults/.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import timedelta

from memory.embedding import FastEmbedEmbedder
from memory.index import LanceFactIndex
from memory.llm import ChatMessage
from memory.priority import BackgroundModel, Replies
from memory.records import Action, PendingWrite
from memory.scope import Scope
from memory.store import Store
from memory.write import MemoryWriter, WriteSettings
from memory.write.prompts.combined import message_of
from tests.memory.write.gated import GatedLanguageModel, is_extraction, until
from tests.memory.write.helpers import (
    ALICE,
    BOB,
    MESSAGE_TIME,
    active_texts,
    decided,
    extracted,
    pending_count,
    pipeline_events,
)
from tests.memory.write.test_durability import ManualClock

NO_GRACE = WriteSettings(shutdown_grace_seconds=0)


def extract_and_add(messages: Sequence[ChatMessage]) -> str:
    """A model that extracts the message as it is said, and adds every new fact."""
    text = message_of(messages[-1].content)
    if is_extraction(messages):
        return extracted(text)
    return decided((1, "ADD", None))


def gated() -> GatedLanguageModel:
    return GatedLanguageModel(fallback=extract_and_add, held=is_extraction)


async def queue_rows(store: Store) -> list[PendingWrite]:
    return await store.read(
        lambda transaction: transaction.pending.due(MESSAGE_TIME + timedelta(days=3650))
    )


async def test_a_killed_worker_leaves_its_claim_and_the_restart_learns_the_write_once(
    sqlite_store: Store, lance_index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    hung = gated()
    # SQLite: the restart releases every claim (one process owns the folder). On PostgreSQL
    # a claim waits for its lease: tests/bot/test_workers_postgres.py kills a real process.
    store, index = sqlite_store, lance_index
    killed = MemoryWriter(store, index, embedder, hung, NO_GRACE)
    await killed.accept(ALICE, "I have a cat named Miso", message_time=MESSAGE_TIME)
    await until(lambda: len(hung.waiting) == 1)
    (row,) = await queue_rows(store)
    assert row.claimed_by == killed.worker.worker_id

    # The next process on the same data folder: start-up releases the dead claim, and the
    # write is claimed again.
    answering = gated()
    restarted = MemoryWriter(store, index, embedder, answering, NO_GRACE)
    restarted.start()
    await until(lambda: len(answering.waiting) == 1)
    (row,) = await queue_rows(store)
    assert row.claimed_by == restarted.worker.worker_id

    # The old worker was only hanging: when its model answers, the row is not its own.
    hung.open()
    await until(lambda: not hung.waiting)
    await killed.drain()
    assert await active_texts(store, ALICE) == []
    answering.open()
    await restarted.drain()
    assert await active_texts(store, ALICE) == ["I have a cat named Miso"]
    assert [event.final_action for event in await pipeline_events(store, ALICE)] == [Action.ADD]
    assert await pending_count(store) == 0
    assert await index.count() == 1
    await restarted.aclose()
    await killed.aclose()


async def test_a_cancelled_worker_keeps_the_write_queued_for_the_next_start(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    hung = gated()
    first = MemoryWriter(store, index, embedder, hung, NO_GRACE)
    await first.accept(ALICE, "I have a cat named Miso", message_time=MESSAGE_TIME)
    await until(lambda: len(hung.waiting) == 1)
    await first.aclose()
    (row,) = await queue_rows(store)
    assert (row.attempts, row.claimed_by, row.last_error) == (0, None, None)
    assert await active_texts(store, ALICE) == []

    model = gated()
    model.open()
    second = MemoryWriter(store, index, embedder, model, NO_GRACE)
    second.start()
    assert await second.drain() == 1
    assert await active_texts(store, ALICE) == ["I have a cat named Miso"]
    assert await pending_count(store) == 0
    await second.aclose()


async def test_a_claim_whose_lease_ended_is_taken_over_and_applied_once(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    clock = ManualClock()
    settings = WriteSettings(claim_lease_seconds=60, shutdown_grace_seconds=0)
    hung = gated()
    slow = MemoryWriter(store, index, embedder, hung, settings, clock=clock)
    await slow.accept(ALICE, "I have a cat named Miso", message_time=MESSAGE_TIME)
    await until(lambda: len(hung.waiting) == 1)

    # Another worker on the same queue (as on PostgreSQL: no start-up release).
    model = gated()
    other = MemoryWriter(store, index, embedder, model, settings, clock=clock)
    other.start(release_stale_claims=False)
    assert await other.drain() == 0  # the claim is alive: hands off
    assert model.waiting == []
    clock.advance(61)
    other.worker.wake()
    await until(lambda: len(model.waiting) == 1)
    hung.open()
    await until(lambda: not hung.waiting)
    assert await slow.drain() == 0  # too late: the row is claimed by the other worker now
    assert await active_texts(store, ALICE) == []
    model.open()
    assert await other.drain() == 1
    assert await active_texts(store, ALICE) == ["I have a cat named Miso"]
    assert (
        len([e for e in await pipeline_events(store, ALICE) if e.final_action is Action.ADD]) == 1
    )
    await other.aclose()
    await slow.aclose()


async def test_people_are_processed_side_by_side_up_to_the_limit_each_in_order(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    hung = gated()
    # A model server with several slots.
    settings = WriteSettings(worker_concurrency=3, shutdown_grace_seconds=0)
    slots = BackgroundModel(hung, Replies(), max_calls=3)
    writer = MemoryWriter(store, index, embedder, hung, settings, background_llm=slots)
    people = [Scope(f"console:person{number}", "console:room1") for number in range(5)]
    await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
    await writer.accept(ALICE, "I moved to Berlin", message_time=MESSAGE_TIME)
    for person in people:
        await writer.accept(person, f"I am {person.owner}", message_time=MESSAGE_TIME)
    await until(lambda: len(hung.waiting) == 3)
    # Three people at once, and Alice's second message waits for her first. Which of the
    # three reached the model first is not fixed: each first embeds its message (the
    # combined call looks for known facts).
    assert "I live in Paris" in hung.waiting
    assert "I moved to Berlin" not in hung.waiting
    hung.open()
    await writer.drain()
    assert await pending_count(store) == 0
    assert await active_texts(store, ALICE) == ["I live in Paris", "I moved to Berlin"]
    for person in people:
        assert await active_texts(store, person) == [f"I am {person.owner}"]
    await writer.aclose()


async def test_a_new_message_takes_a_free_slot_while_another_write_hangs(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    model = GatedLanguageModel(
        fallback=extract_and_add, held=lambda messages: messages[-1].content == "I live in Paris"
    )
    # A model server with two slots: one hung call leaves the other free.
    slots = BackgroundModel(model, Replies(), max_calls=2)
    writer = MemoryWriter(store, index, embedder, model, NO_GRACE, background_llm=slots)
    await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
    await until(lambda: model.waiting == ["I live in Paris"])
    await writer.accept(BOB, "I live in Rome", message_time=MESSAGE_TIME)

    async def bob_learned() -> bool:
        return await active_texts(store, BOB) == ["I live in Rome"]

    await until(bob_learned)
    assert model.waiting == ["I live in Paris"]
    model.open()
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I live in Paris"]
    await writer.aclose()


async def test_a_second_worker_does_not_take_a_later_write_of_a_person_in_progress(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    hung = gated()
    # One person at a time: the first worker, busy with Alice, leaves Bob's row to the
    # second (with free slots, which of the two claims it first is a race).
    first = MemoryWriter(store, index, embedder, hung, replace(NO_GRACE, worker_concurrency=1))
    await first.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
    await until(lambda: len(hung.waiting) == 1)
    await first.accept(ALICE, "I moved to Berlin", message_time=MESSAGE_TIME)
    await first.accept(BOB, "I live in Rome", message_time=MESSAGE_TIME)

    model = gated()
    model.open()
    second = MemoryWriter(store, index, embedder, model, NO_GRACE)
    second.start(release_stale_claims=False)
    assert await second.drain() == 1  # Bob's; Alice's Berlin waits behind her Paris
    assert await active_texts(store, ALICE) == []
    hung.open()
    await first.drain()
    await second.drain()
    assert await active_texts(store, ALICE) == ["I live in Paris", "I moved to Berlin"]
    assert await active_texts(store, BOB) == ["I live in Rome"]
    await first.aclose()
    await second.aclose()


async def test_the_same_message_handed_over_twice_is_stored_and_queued_once(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    writer = MemoryWriter(store, index, embedder, gated(), NO_GRACE)
    first = await writer.accept(
        ALICE, "I have a cat", message_time=MESSAGE_TIME, platform_message_id="$event1"
    )
    again = await writer.accept(
        ALICE, "I have a cat", message_time=MESSAGE_TIME, platform_message_id="$event1"
    )
    # The same id with other words is another message (a console id reused by a new session).
    reused = await writer.accept(
        ALICE, "I have a dog", message_time=MESSAGE_TIME, platform_message_id="$event1"
    )
    # Bob's message with that id is his own.
    bob = await writer.accept(
        BOB, "I have a cat", message_time=MESSAGE_TIME, platform_message_id="$event1"
    )
    assert not first.duplicate and first.pending_id is not None
    assert again.duplicate and again.pending_id is None and again.turn_id == first.turn_id
    assert not reused.duplicate and reused.pending_id is not None
    assert not bob.duplicate and bob.pending_id is not None
    assert [row.text for row in await queue_rows(store)] == [
        "I have a cat",
        "I have a dog",
        "I have a cat",
    ]
    await writer.aclose()


async def test_accept_stores_the_turn_and_the_queued_write_together(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    writer = MemoryWriter(store, index, embedder, gated(), NO_GRACE)
    await store.write(lambda transaction: transaction.set_learning_paused(ALICE.owner, True))
    paused = await writer.accept(ALICE, "I have a cat", message_time=MESSAGE_TIME)
    # Paused is per person: someone else's message meanwhile is queued.
    other = await writer.accept(BOB, "I have a fish", message_time=MESSAGE_TIME)
    await store.write(lambda transaction: transaction.set_learning_paused(ALICE.owner, False))
    learned = await writer.accept(ALICE, "I have a dog", message_time=MESSAGE_TIME)
    turns = await store.read(
        lambda transaction: transaction.turns.recent_of(ALICE.room, ALICE.owner, limit=10)
    )
    assert [(turn.id, turn.text, turn.author) for turn in turns] == [
        (paused.turn_id, "I have a cat", ALICE.owner),
        (learned.turn_id, "I have a dog", ALICE.owner),
    ]
    # Without a platform id, a local one links the turn, the queued write and its facts.
    bobs, row = await queue_rows(store)
    assert paused.pending_id is None
    assert (bobs.id, bobs.owner) == (other.pending_id, BOB.owner)
    assert row.id == learned.pending_id
    assert row.source_message_id == learned.source_message_id == turns[1].platform_message_id
    assert learned.source_message_id.startswith("local:")
    await writer.aclose()


async def test_an_event_of_a_write_that_failed_names_its_source_message(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    model = gated()
    model.add("I am sorry, I cannot do that.")
    model.open()
    writer = MemoryWriter(store, index, embedder, model, NO_GRACE)
    accepted = await writer.accept(
        ALICE, "I have a cat", message_time=MESSAGE_TIME, platform_message_id="$e1"
    )
    await writer.drain()
    (event,) = await pipeline_events(store, ALICE)
    assert event.guard == "unusable_output"
    assert event.source_message_id == accepted.source_message_id == "$e1"
    await writer.aclose()


def claimed(store: Store) -> Callable[[], Awaitable[bool]]:
    async def any_claimed() -> bool:
        return any(row.claimed_by is not None for row in await queue_rows(store))

    return any_claimed


async def test_the_worker_sends_no_model_call_while_a_reply_is_in_progress(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """A reply's model call must not queue behind the write queue's at the model server."""
    replies = Replies()
    model = gated()
    model.open()
    background_llm = BackgroundModel(model, replies)
    writer = MemoryWriter(store, index, embedder, model, NO_GRACE, background_llm=background_llm)
    with replies.reply():
        await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
        await until(claimed(store))  # the worker has the row: its call waits at the gate
        await asyncio.sleep(0.1)
        assert model.calls == []
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I live in Paris"]
    await writer.aclose()


async def test_the_worker_takes_no_message_while_a_reply_is_in_progress(
    store: Store, index: LanceFactIndex, embedder: FastEmbedEmbedder
) -> None:
    """Not only its model calls: the queue's work waits, so its CPU and writes are the
    reply's (the reply's own memory work is what a person waits for)."""
    replies = Replies()
    model = gated()
    model.open()
    writer = MemoryWriter(store, index, embedder, model, NO_GRACE, replies=replies)
    with replies.reply():
        await writer.accept(ALICE, "I live in Paris", message_time=MESSAGE_TIME)
        await asyncio.sleep(0.2)
        assert not await claimed(store)()
    await writer.drain()
    assert await active_texts(store, ALICE) == ["I live in Paris"]
    await writer.aclose()
