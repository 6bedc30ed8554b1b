"""Group commits: the plans of several queued messages applied in ONE store transaction and
ONE update of the vector index (inside it with pgvector, right after it with LanceDB).

Each queued message is planned on its own (extraction, candidates, decision), then handed
here. One commit is in flight at a time; the plans that become ready meanwhile wait and go
together in the next one (up to ``max_group``; ``busy_group`` while replies are in progress,
as they wait for the transaction's write lock), so a quiet queue commits each message at once
and a busy one in groups, without waiting on purpose.

A group holds the commit locks of all its owners (taken in sorted order; everything else
takes one), applies each plan as a single commit would (its row completed only if it is
still claimed by its worker, so exactly-once holds per row), and updates the index once under
the same locks, so a forget that follows sees the index already written. One delete and one
upsert per group instead of per message: fewer LanceDB fragments, fewer compactions. A person
has at most one plan in a group (the worker never has two rows of one person in flight; a
second plan would wait for the next group).

If the group's transaction fails, each plan is committed on its own, so one bad row fails
alone (and stays queued) instead of taking the others with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from memory.keyed_locks import KeyedLocks
from memory.priority import ReplyPriority, background_turn
from memory.records import FactSource
from memory.write.apply import IndexChanges, update_index
from memory.write.pipeline import (
    MessageInput,
    Plan,
    WriteOutcome,
    WriteParts,
    apply_plan,
    commit,
)

log = logging.getLogger(__name__)


@dataclass
class _Ready:
    message: MessageInput
    source: FactSource
    plan: Plan
    done: asyncio.Future[WriteOutcome] = field(repr=False)

    @property
    def owner(self) -> str:
        return self.message.scope.owner


class GroupCommitter:
    def __init__(
        self,
        parts: WriteParts,
        locks: KeyedLocks,
        *,
        max_group: int = 32,
        busy_group: int = 4,
        priority: ReplyPriority | None = None,
    ) -> None:
        if max_group < 1 or busy_group < 1:
            raise ValueError("max_group and busy_group must be at least 1")
        self._parts = parts
        self._locks = locks
        self._max_group = max_group
        self._busy_group = min(busy_group, max_group)
        self._priority = priority
        self._ready: deque[_Ready] = deque()
        self._wake = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        # Sizes of the groups committed so far (the benchmark reports them).
        self.group_sizes: list[int] = []

    async def commit(self, message: MessageInput, source: FactSource, plan: Plan) -> WriteOutcome:
        """Apply ``plan`` with whatever else is ready; raises what its own commit raised."""
        done: asyncio.Future[WriteOutcome] = asyncio.get_running_loop().create_future()
        self._ready.append(_Ready(message, source, plan, done))
        self._wake.set()
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(
                self._run(), name="group commit", context=contextvars.Context()
            )
        return await done

    async def aclose(self) -> None:
        """Stop; plans still waiting get CancelledError (their rows stay queued)."""
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
            self._runner = None
        while self._ready:
            self._ready.popleft().done.cancel()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            group = self._take_group()
            if not group:
                self._wake.clear()
                continue
            try:
                await self._commit_group(group)
            finally:
                for ready in group:
                    if not ready.done.done():
                        ready.done.cancel()

    def _group_limit(self) -> int:
        """``busy_group`` while replies are in progress: the group's transaction holds the
        store's write lock, which each reply needs twice, and under load every statement of
        a large group waits its turn on the busy event loop (a group of 16 held the lock for
        over a second at load 12); ``max_group`` otherwise."""
        if self._priority is not None and self._priority.replies_in_progress > 0:
            return self._busy_group
        return self._max_group

    def _take_group(self) -> list[_Ready]:
        group: list[_Ready] = []
        later: list[_Ready] = []
        owners: set[str] = set()
        limit = self._group_limit()
        while self._ready and len(group) < limit:
            ready = self._ready.popleft()
            if ready.done.done():  # its worker was cancelled
                continue
            if ready.owner in owners:
                later.append(ready)
                continue
            owners.add(ready.owner)
            group.append(ready)
        self._ready.extendleft(reversed(later))
        return group

    async def _commit_group(self, group: list[_Ready]) -> None:
        async with background_turn(self._priority), self._owner_locks(group):
            try:
                outcomes = await self._apply_together(group)
            except Exception as error:
                if len(group) == 1:
                    group[0].done.set_exception(error)
                    return
                log.warning(
                    "a group commit of %d writes failed (%s); committing them one by one",
                    len(group),
                    error,
                )
                await self._commit_one_by_one(group)
                return
        self.group_sizes.append(len(group))
        for ready, outcome in zip(group, outcomes, strict=True):
            ready.done.set_result(outcome)

    async def _apply_together(self, group: list[_Ready]) -> list[WriteOutcome]:
        outcomes: list[WriteOutcome] = []
        changes = IndexChanges()
        async with self._parts.store.transaction(index=self._parts.index) as transaction:
            await transaction.lock_people(ready.owner for ready in group)
            for ready in group:
                outcome, own = await apply_plan(
                    transaction, self._parts, ready.message, ready.source, ready.plan
                )
                outcomes.append(outcome)
                changes.delete.extend(own.delete)
                changes.upsert.extend(own.upsert)
            await update_index(transaction.index, changes)
        return outcomes

    async def _commit_one_by_one(self, group: list[_Ready]) -> None:
        for ready in group:
            try:
                outcome = await commit(self._parts, ready.message, ready.source, ready.plan)
            except Exception as error:
                ready.done.set_exception(error)
            else:
                ready.done.set_result(outcome)

    @asynccontextmanager
    async def _owner_locks(self, group: list[_Ready]) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for owner in sorted({ready.owner for ready in group}):
                await stack.enter_async_context(self._locks.hold(owner))
            yield
