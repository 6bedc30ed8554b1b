"""Forgetting's erasure of index rows against index writes made from reading the database.

Reconcile and the index rebuild read which facts are active, embed them and write them to the
index without the person's commit lock: a forget committed between their read and their write
would have its fact written back, its words in the index files. So such a write re-reads,
inside :meth:`ErasureGate.refilling`, which of its facts are still active and writes only
those, and a forget erases its index rows inside :meth:`ErasureGate.erasing`, which excludes
it. Either the forget committed before the re-read (its facts are left out), or the erasure
runs after the write (and removes them): there is no third order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiorwlock


class ErasureGate:
    """One per process (the :class:`~memory.store.Store` holds it)."""

    def __init__(self) -> None:
        self._lock = aiorwlock.RWLock()

    @asynccontextmanager
    async def refilling(self) -> AsyncIterator[None]:
        """Held while a write made from reading the database re-reads and writes (shared)."""
        async with self._lock.reader:
            yield

    @asynccontextmanager
    async def erasing(self) -> AsyncIterator[None]:
        """Held while a forget erases index rows (alone)."""
        async with self._lock.writer:
            yield
