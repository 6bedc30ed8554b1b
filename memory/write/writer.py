"""The memory writer: the one object the bot talks to for everything that changes memory.

A thin facade: ``accept`` takes a message in (turn and queued write, one transaction) before
anyone answers it, the queue worker learns from it later; ``remember``, ``forget``, ``undo``,
``correct`` and ``erase_message`` are each one store transaction (``undo`` writes the index rows
of the facts it restored in a second one, once they are embedded).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from memory.embedding.base import Embedder
from memory.errors import MemoryLayerError
from memory.index.base import VectorIndex
from memory.llm import LanguageModel
from memory.priority import BackgroundModel, Priority, Replies
from memory.records import Action, Actor, FactEvent, FactSource, PendingWrite
from memory.scope import Scope, ScopeMode
from memory.store import Accepted, EventDraft, Store, StoreTransaction, utc_now
from memory.write.correction import plan_correction
from memory.write.errors import UnusableModelOutput, WriteError
from memory.write.extraction import ProposedFact
from memory.write.guards import Guard
from memory.write.history import read_history
from memory.write.pipeline import (
    MessageInput,
    PipelineSettings,
    QueueClaim,
    WriteOutcome,
    WriteParts,
    commit,
    plan_message,
    plan_writes,
)
from memory.write.undo import UndoResult, undo_latest
from memory.write.worker import QueueWorker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WriteSettings:
    pipeline: PipelineSettings = field(default_factory=PipelineSettings)
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    # Queued writes do not store the scope mode; this one is used when they are processed.
    scope_mode: ScopeMode = ScopeMode.USER_ROOM
    # How many people's writes the worker processes at once (each person's in order).
    worker_concurrency: int = 16
    # A claim older than this is taken as its worker's death: longer than any write takes.
    claim_lease_seconds: float = 900.0
    # On shutdown, how long the worker may finish queued writes before it is cut off.
    shutdown_grace_seconds: float = 5.0
    # False: this process only queues; other processes (``mnemo worker``) apply the writes.
    apply_queued: bool = True

    def retry_delay(self, attempts: int) -> timedelta:
        """Exponential backoff: base, 2x base, 4x base ... capped at the maximum."""
        seconds = min(self.retry_base_seconds * 2 ** min(attempts, 30), self.retry_max_seconds)
        return timedelta(seconds=seconds)


class MemoryWriter:
    def __init__(
        self,
        store: Store,
        index: VectorIndex,
        embedder: Embedder,
        llm: LanguageModel,
        settings: WriteSettings,
        *,
        clock: Callable[[], datetime] | None = None,
        background_llm: LanguageModel | None = None,
        replies: Replies | None = None,
    ) -> None:
        """``background_llm``: the queue's model, shared with consolidation by the
        composition root; by default one call at a time that gives way to replies.
        ``replies``: the replies in progress, which the queue waits for."""
        self._store = store
        self._index = index
        self._embedder = embedder
        self._settings = settings
        # A person waits for "remember" and undo: their model calls do not give way.
        self._parts = WriteParts(store, index, embedder, llm, settings.pipeline)
        # The queue's do: they are not sent while replies are in progress.
        replies = replies or Replies()
        background_llm = background_llm or BackgroundModel(llm, replies)
        self._queue_parts = WriteParts(store, index, embedder, background_llm, settings.pipeline)
        self._clock = clock or utc_now
        self.worker = QueueWorker(
            store,
            self._process_claimed,
            lease=timedelta(seconds=settings.claim_lease_seconds),
            clock=self._clock,
            concurrency=settings.worker_concurrency,
            replies=replies,
        )

    def start(self, *, release_stale_claims: bool = True) -> None:
        """Start the queue worker in the background; returns at once (see QueueWorker).
        Nothing when this process only queues (``apply_queued`` false)."""
        if self._settings.apply_queued:
            self.worker.start(release_stale_claims=release_stale_claims)

    def wake(self) -> None:
        """Look at the queue now (another process may have queued writes)."""
        if self._settings.apply_queued:
            self.worker.wake()

    async def accept(
        self,
        scope: Scope,
        text: str,
        *,
        message_time: datetime,
        platform_message_id: str | None = None,
        author_name: str | None = None,
        audience: str | None = None,
    ) -> Accepted:
        """Take a person's message in before it is answered: their turn and (unless they
        paused learning) its queued write, in ONE transaction; a message handed over twice
        (same platform id and text) is stored once."""
        # Without a platform id the message gets one: forgetting finds its turn by it.
        source = platform_message_id or f"local:{uuid.uuid4().hex}"

        def take_in(transaction: StoreTransaction) -> Accepted:
            turn, new = transaction.turns.add_new(
                scope.room,
                scope.owner,
                text,
                created_at=message_time,
                platform_message_id=source,
                author_name=author_name,
                audience=audience,
            )
            if not new:
                return Accepted(turn.id, source, None, duplicate=True)
            queued = transaction.pending.enqueue_unless_paused(
                scope, text, message_time=message_time, now=self._clock(), source=source
            )
            return Accepted(turn.id, source, None if queued is None else queued.id)

        accepted = await self._store.write(take_in)
        if accepted.pending_id is not None:
            self.wake()
        return accepted

    async def correct(
        self, owner: str, room: str, turn_id: int, message_id: str, text: str, *, learn: bool
    ) -> None:
        """An edited message: its turn takes ``text``; if ``learn``, what the message taught
        is corrected by the new text (the old words, still queued, are simply replaced)."""

        def change(transaction: StoreTransaction) -> bool:
            """Whether a correction was queued."""
            transaction.turns.change_text(turn_id, text)
            if not learn or transaction.pending.revise_unclaimed(owner, room, message_id, text):
                return False
            turn = transaction.turns.said([room], message_id)
            sent_at = self._clock() if turn is None else turn.created_at
            transaction.pending.enqueue(
                Scope(owner, room, self._settings.scope_mode),
                text,
                message_time=sent_at,
                now=self._clock(),
                source_message_id=message_id,
                corrects=True,
            )
            return True

        if await self._store.write(change):
            self.wake()

    async def erase_message(self, owner: str, rooms: Sequence[str], message_id: str) -> bool:
        """A person deleted their message: erase its turns, its queued writes and the facts
        it alone taught, for good (as ``forget``); whether anything was there."""

        def erase(transaction: StoreTransaction) -> bool:
            transaction.lock_people([owner])
            erased = transaction.forget.message(owner, rooms, message_id)
            found = bool(erased.fact_ids or erased.turns or erased.queued or erased.events)
            if found:
                transaction.forgotten(erased.fact_ids)
            return found

        return await self._store.write(erase, index=self._index)

    async def retry_due(self) -> int:
        """Wake the worker for the writes whose retry time has come (the scheduled job);
        returns at once with how many writes are queued."""
        self.wake()
        return await self._store.read(lambda transaction: transaction.pending.count())

    async def drain(self) -> int:
        """Wait for the worker to process what is due now; how many writes it completed
        (none when other processes apply them)."""
        if not self._settings.apply_queued:
            return 0
        return await self.worker.drain()

    async def remember(self, scope: Scope, text: str) -> WriteOutcome:
        """Store what the person asked to be remembered: no extraction, the same candidates
        and guards; if the model cannot decide, the fact is added (the person asked)."""
        if not text.strip():
            raise WriteError("there is nothing to remember: the text is empty")
        fact = ProposedFact(" ".join(text.split()))  # filed under the default category
        plan = await plan_writes(self._parts, scope, [fact], strict=False)
        message = MessageInput(scope, text, self._clock())
        return await commit(self._parts, message, FactSource.REMEMBERED, plan)

    async def forget(self, scope: Scope, fact_id: int) -> bool:
        """Erase a fact, its versions, their events and the turns it was learned from, for
        good; False if there is no such fact in the scope."""

        def erase(transaction: StoreTransaction) -> bool:
            transaction.lock_people([scope.owner])
            erased = transaction.forget.fact(scope, fact_id)
            if erased is not None:
                transaction.forgotten(erased.fact_ids)
            return erased is not None

        return await self._store.write(erase, index=self._index)

    async def forget_all(self, scope: Scope) -> int:
        """Erase everything of the person in the scope (facts, events, turns, queued
        writes); how many facts were active."""

        def erase(transaction: StoreTransaction) -> int:
            transaction.lock_people([scope.owner])
            erased = transaction.forget.everything(scope)
            transaction.forgotten(erased.fact_ids)
            return erased.active

        return await self._store.write(erase, index=self._index)

    async def undo(self, scope: Scope) -> UndoResult | None:
        return await undo_latest(self._store, self._index, self._embedder, scope)

    async def history(self, scope: Scope, fact_id: int) -> list[FactEvent]:
        return await self._store.read(partial(read_history, scope, fact_id))

    async def aclose(self) -> None:
        """Stop the worker after a short grace (a write cut off stays queued, and is learned
        after the next start); the parts belong to whoever built them."""
        await self.worker.aclose(grace_seconds=self._settings.shutdown_grace_seconds)

    async def _process_claimed(self, pending: PendingWrite, worker: str) -> bool:
        """Plan (model calls giving way to replies), then commit in the background's turn."""
        scope = Scope(pending.owner, pending.room, self._settings.scope_mode)
        claim = QueueClaim(pending.id, worker)
        message = MessageInput(
            scope, pending.text, pending.message_time, pending.source_message_id, claim
        )
        planner = plan_correction if pending.corrects else plan_message
        try:
            plan = await planner(self._queue_parts, message)
            outcome = await commit(
                self._queue_parts, message, FactSource.EXTRACTED, plan, priority=Priority.BACKGROUND
            )
        except Exception as error:  # anything: the message stays queued, nothing is lost
            await self._reschedule(pending, worker, error)
            return False
        return outcome.completed

    async def _reschedule(self, pending: PendingWrite, worker: str, error: Exception) -> None:
        delay = self._settings.retry_delay(pending.attempts)
        reason = f"{type(error).__name__}: {error}"
        if isinstance(error, MemoryLayerError):
            log.warning("write %d stays queued (retry in %s): %s", pending.id, delay, reason)
        else:
            log.error("write %d failed unexpectedly; it stays queued", pending.id, exc_info=error)
        event = (
            unusable_output_event(error, pending.source_message_id)
            if isinstance(error, UnusableModelOutput)
            else None
        )
        # Nothing if the row is gone or no longer ``worker``'s: a forgotten message leaves no trace.

        def reschedule(transaction: StoreTransaction) -> None:
            kept = transaction.pending.reschedule(
                pending.id, worker, error=reason[:1000], next_attempt_at=self._clock() + delay
            )
            if kept and event is not None:
                transaction.facts.record_event(Scope(pending.owner, pending.room), event)

        await self._store.write(reschedule, priority=Priority.BACKGROUND)


def unusable_output_event(error: UnusableModelOutput, source_message_id: str | None) -> EventDraft:
    """The guard that kept an unreadable answer from being applied, with what it said."""
    return EventDraft(
        final_action=Action.NONE,
        actor=Actor.PIPELINE,
        proposed_action=error.proposed_action or error.raw[:200],
        proposed_target=error.proposed_target,
        guard=Guard.UNUSABLE_OUTPUT.value,
        source_message_id=source_message_id,
    )
