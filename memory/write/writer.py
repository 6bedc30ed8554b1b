"""The memory writer: the one object the bot talks to for everything that changes memory.

A thin facade. Each message is first committed to ``pending_writes`` (so a crash or an LLM
outage loses nothing), then processed in a background task. Work is serialised per person
and in arrival order, so "I live in Paris" is never decided after "I moved to Berlin"; a
failed write stays queued with exponential backoff and holds back the later messages of the
same person, except when the model's answer was unusable (that must not block learning).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.embedding.base import Embedder
from memory.errors import MemoryLayerError
from memory.index.base import VectorIndex
from memory.llm import LanguageModel
from memory.records import Action, Actor, FactEvent, PendingWrite
from memory.scope import Scope, ScopeMode
from memory.store import EventDraft, Store, StoreTransaction, utc_now
from memory.write.candidates import CALIBRATED_CANDIDATE_THRESHOLD
from memory.write.errors import UnusableModelOutput, WriteError
from memory.write.extraction import ProposedFact
from memory.write.guards import Guard
from memory.write.history import fact_history
from memory.write.pipeline import (
    MessageInput,
    PipelineSettings,
    WriteOutcome,
    WriteParts,
    process_message,
    remember,
)
from memory.write.undo import UndoResult, undo_latest

log = logging.getLogger(__name__)

REMEMBERED_CATEGORY = "other"


@dataclass(frozen=True)
class WriteSettings:
    candidate_threshold: float = CALIBRATED_CANDIDATE_THRESHOLD
    candidate_limit: int = 5
    max_destructive_actions: int = 3
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    # Queued writes do not store the scope mode; this one is used when they are retried.
    scope_mode: ScopeMode = ScopeMode.USER_ROOM

    def pipeline(self) -> PipelineSettings:
        return PipelineSettings(
            self.candidate_threshold, self.candidate_limit, self.max_destructive_actions
        )

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
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._settings = settings
        self._parts = WriteParts(store, index, embedder, llm, settings.pipeline())
        self._clock = clock or utc_now
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[int]] = set()
        # The scope (with its mode) each message was submitted with, while it is queued.
        self._scopes: dict[int, Scope] = {}

    async def submit(
        self,
        scope: Scope,
        text: str,
        *,
        message_time: datetime,
        source_message_id: str | None = None,
    ) -> PendingWrite:
        """Queue a message durably (committed on return), then process it in the background."""
        async with self._store.transaction() as transaction:
            pending = await transaction.pending.enqueue(
                scope,
                text,
                message_time=message_time,
                now=self._clock(),
                source_message_id=source_message_id,
            )
        self._scopes[pending.id] = scope
        task = asyncio.create_task(self._process_in_background(scope.owner))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return pending

    async def process_due(self) -> int:
        """Retry the queued writes whose time has come; how many were completed."""
        async with self._store.transaction() as transaction:
            due = await transaction.pending.due(self._clock())
        owners = list(dict.fromkeys(pending.owner for pending in due))
        completed = 0
        for owner in owners:
            completed += await self._process_owner(owner)
        return completed

    async def drain(self) -> None:
        """Wait until the background work started so far has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def remember(self, scope: Scope, text: str) -> WriteOutcome:
        """Store what the person asked to be remembered (source ``remembered``)."""
        if not text.strip():
            raise WriteError("there is nothing to remember: the text is empty")
        fact = ProposedFact(" ".join(text.split()), REMEMBERED_CATEGORY)
        async with self._lock(scope.owner):
            return await remember(self._parts, MessageInput(scope, text, self._clock()), fact)

    async def forget(self, scope: Scope, fact_id: int) -> bool:
        """Erase a fact (with the versions it replaced) from SQLite and the index, for good."""
        async with self._lock(scope.owner), self._store.transaction() as transaction:
            erased = await transaction.facts.erase(scope, fact_id)
            if erased:
                await record_forget(transaction, scope)
        await self._index.delete(erased)
        return bool(erased)

    async def forget_all(self, scope: Scope) -> int:
        """Erase every fact of the scope and its queued messages; how many were active."""
        async with self._lock(scope.owner), self._store.transaction() as transaction:
            active = await transaction.facts.count(scope)
            erased = await transaction.facts.erase_all(scope)
            await transaction.pending.discard_for_scope(scope)
            if erased:
                await record_forget(transaction, scope)
        await self._index.delete(erased)
        return active

    async def undo(self, scope: Scope) -> UndoResult | None:
        async with self._lock(scope.owner):
            return await undo_latest(self._store, self._index, self._embedder, scope)

    async def history(self, scope: Scope, fact_id: int) -> list[FactEvent]:
        return await fact_history(self._store, scope, fact_id)

    async def aclose(self) -> None:
        """Finish background work; the parts themselves belong to whoever built them."""
        await self.drain()

    def _lock(self, owner: str) -> asyncio.Lock:
        return self._locks.setdefault(owner, asyncio.Lock())

    async def _process_in_background(self, owner: str) -> int:
        """A background run must not die silently: the write stays queued for process_due."""
        try:
            return await self._process_owner(owner)
        except Exception:
            log.exception("background memory write for %s failed; it stays queued", owner)
            return 0

    async def _process_owner(self, owner: str) -> int:
        """Process one person's queued writes in order; stop at the first that must wait."""
        completed = 0
        async with self._lock(owner):
            async with self._store.transaction() as transaction:
                queued = await transaction.pending.for_owner(owner)
            for pending in queued:
                if pending.next_attempt_at > self._clock():
                    if holds_back_later(pending):
                        break
                    continue
                if not await self._process_one(pending):
                    break
                completed += 1
        return completed

    async def _process_one(self, pending: PendingWrite) -> bool:
        scope = self._scopes.get(pending.id) or Scope(
            pending.owner, pending.room, self._settings.scope_mode
        )
        message = MessageInput(
            scope, pending.text, pending.message_time, pending.source_message_id, pending.id
        )
        try:
            outcome = await process_message(self._parts, message)
        except Exception as error:  # anything: the message stays queued, nothing is lost
            await self._reschedule(pending, error)
            return False
        self._scopes.pop(pending.id, None)
        return outcome.completed

    async def _reschedule(self, pending: PendingWrite, error: Exception) -> None:
        delay = self._settings.retry_delay(pending.attempts)
        reason = f"{type(error).__name__}: {error}"
        if isinstance(error, MemoryLayerError):
            log.warning("write %d stays queued (retry in %s): %s", pending.id, delay, reason)
        else:
            log.exception("write %d failed unexpectedly; it stays queued", pending.id)
        async with self._store.transaction() as transaction:
            await transaction.pending.reschedule(
                pending.id, error=reason[:1000], next_attempt_at=self._clock() + delay
            )
            if isinstance(error, UnusableModelOutput):
                scope = Scope(pending.owner, pending.room, self._settings.scope_mode)
                await transaction.facts.record_event(scope, unusable_output_event(error))


def unusable_output_event(error: UnusableModelOutput) -> EventDraft:
    """The guard that kept an unreadable answer from being applied, with what it said."""
    return EventDraft(
        final_action=Action.NONE,
        actor=Actor.PIPELINE,
        proposed_action=error.proposed_action or error.raw[:200],
        proposed_target=error.proposed_target,
        guard=Guard.UNUSABLE_OUTPUT.value,
    )


def holds_back_later(pending: PendingWrite) -> bool:
    """A write waiting out an outage keeps later messages waiting (their order matters); one
    the model could not answer does not, or a single odd message would stop all learning."""
    return not (pending.last_error or "").startswith(UnusableModelOutput.__name__)


async def record_forget(transaction: StoreTransaction, scope: Scope) -> None:
    """An audit row without the text: forgetting is final, the words must not survive it."""
    await transaction.facts.record_event(
        scope, EventDraft(final_action=Action.FORGET, actor=Actor.USER)
    )
