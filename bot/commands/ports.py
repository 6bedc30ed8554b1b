"""What the core and its commands need from the memory layer's write and read paths.

Small structural types, so the core and its commands depend on behaviour, not on classes:
:class:`memory.write.MemoryWriter` and :class:`memory.recall.Recaller` satisfy them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from memory.embedding import Vectors
from memory.records import Fact, FactEvent
from memory.scope import Scope
from memory.store import Accepted, StoreTransaction
from memory.write.pipeline import WriteOutcome
from memory.write.undo import UndoResult

T = TypeVar("T")


class Recalled(Protocol):
    @property
    def fact(self) -> Fact: ...

    @property
    def score(self) -> float: ...


class FactRecall(Protocol):
    def start_embedding(self, text: str) -> asyncio.Task[Vectors] | None:
        """Begin embedding a message for its recall (beside its intake), if recall will."""
        ...

    async def for_message_with(
        self,
        scope: Scope,
        text: str,
        also: Callable[[StoreTransaction], T],
        *,
        embedding: Awaitable[Vectors] | None = None,
    ) -> tuple[Sequence[Recalled], T]:
        """Recall for a reply, and what ``also`` reads in the same read transaction."""
        ...

    async def lookup(self, scope: Scope, query: str) -> Sequence[Recalled]: ...


class MemoryWrites(Protocol):
    async def accept(
        self,
        scope: Scope,
        text: str,
        *,
        message_time: datetime,
        platform_message_id: str | None = None,
        author_name: str | None = None,
        audience: str | None = None,
    ) -> Accepted: ...

    async def correct(
        self, owner: str, room: str, turn_id: int, message_id: str, text: str, *, learn: bool
    ) -> None: ...

    async def erase_message(self, owner: str, rooms: Sequence[str], message_id: str) -> bool: ...

    async def remember(self, scope: Scope, text: str) -> WriteOutcome: ...

    async def forget(self, scope: Scope, fact_id: int) -> bool: ...

    async def forget_all(self, scope: Scope) -> int: ...

    async def undo(self, scope: Scope) -> UndoResult | None: ...

    async def history(self, scope: Scope, fact_id: int) -> Sequence[FactEvent]: ...
