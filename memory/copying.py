"""Moving a whole memory between backends (``mnemo copy-store``): the rows first, then the
vectors of the active facts, read from the source index (nothing embedded again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Protocol

from sqlalchemy import Row, select

from memory.index.base import IndexedFact, StoredVector, VectorIndex
from memory.records import FactStatus
from memory.store import Store, StoreTransaction
from memory.store.copy import BATCH, TableCount, copy_rows, require_empty
from memory.store.schema import FactRow


class VectorSource(Protocol):
    async def stored_vectors(self, fact_ids: list[int]) -> dict[int, StoredVector]: ...


@dataclass(frozen=True, slots=True)
class CopyReport:
    tables: list[TableCount]
    vectors_copied: int
    active_facts: int

    @property
    def complete(self) -> bool:
        return all(count.source == count.target for count in self.tables)


async def copy_memory(
    source: Store, source_index: VectorSource, target: Store, target_index: VectorIndex
) -> CopyReport:
    """Copy everything into ``target``, which must hold no facts, turns or queued writes."""
    await require_empty(target, "the target database")
    tables = await copy_rows(source, target)
    copied, active = await copy_vectors(source, source_index, target, target_index)
    return CopyReport(tables, copied, active)


async def copy_vectors(
    source: Store, source_index: VectorSource, target: Store, target_index: VectorIndex
) -> tuple[int, int]:
    """The active facts' vectors; (copied, active facts)."""
    copied = active = 0
    after = 0
    while True:
        facts = await source.read(partial(active_after, after))
        if not facts:
            return copied, active
        stored = await source_index.stored_vectors([fact.id for fact in facts])
        rows = [
            IndexedFact(fact.id, fact.owner, fact.room, fact.text, held.vector, held.model)
            for fact in facts
            if (held := stored.get(fact.id)) is not None
        ]
        await target.write(partial(upsert, rows), index=target_index)
        copied += len(rows)
        active += len(facts)
        after = facts[-1].id


def active_after(after: int, transaction: StoreTransaction) -> Sequence[Row[int, str, str, str]]:
    """The next batch of active facts, by id."""
    query = (
        select(FactRow.id, FactRow.owner, FactRow.room, FactRow.text)
        .where(FactRow.status == FactStatus.ACTIVE.value, FactRow.id > after)
        .order_by(FactRow.id)
        .limit(BATCH)
    )
    return transaction.session.execute(query).all()


def upsert(rows: list[IndexedFact], transaction: StoreTransaction) -> None:
    transaction.index.upsert(rows)
