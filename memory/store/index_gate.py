"""Index writes made from reading the database against those of commits and forgets.

Reconcile and the index rebuild read which facts are active, then write or delete their index
rows without the people's commit locks. Two things can come between that read and the write:
a forget, whose fact would be written back (its words in the index files), and a commit that
makes a fact active or inactive (an undo, a queued write), whose index rows are written after
the commit (LanceDB) and would be undone by reconcile's stale write. So such a write re-reads,
inside :meth:`IndexGate.checking` (alone), which of its facts are active, and writes only what
that read allows; a commit's index writes (:meth:`IndexGate.after_commit`) and a forget's
erasure (:meth:`IndexGate.erasing`) are made inside the gate, shared. Either the change
committed before the re-read (which sees it), or its index writes wait for reconcile's and
come after them: there is no third order.

One per process. On PostgreSQL the vectors commit with their facts, and reconcile's own
writes take the people's locks (:class:`memory.index.pgvector.PgVectorIndex`), which hold
other processes off too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiorwlock


class IndexGate:
    """One per process (the :class:`~memory.store.Store` holds it)."""

    def __init__(self) -> None:
        self._lock = aiorwlock.RWLock()

    @asynccontextmanager
    async def checking(self) -> AsyncIterator[None]:
        """Held (alone) while a write made from reading the database re-reads and writes."""
        async with self._lock.writer:
            yield

    @asynccontextmanager
    async def after_commit(self) -> AsyncIterator[None]:
        """Held (shared) while a commit's index rows are written after it."""
        async with self._lock.reader:
            yield

    @asynccontextmanager
    async def erasing(self) -> AsyncIterator[None]:
        """Held (shared) while a forget erases index rows."""
        async with self._lock.reader:
            yield
