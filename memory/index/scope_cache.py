"""Recently searched scopes' vectors in memory, so a search is one matrix product
(a LanceDB filtered search was most of a reply's CPU: docs/benchmarks.md, "Load").

An entry holds exactly the rows of the scope's own filter and model, under its full key.
Every index write tells the cache; writes made while a fill loaded are replayed on it, and a
failed write drops its owners' entries. Bounded by rows held (least recently used first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from memory.embedding.base import normalise
from memory.index.base import IndexedFact, ScoredFactId
from memory.scope import Scope

FactIds = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]
ScopeKey = tuple[str, str, str, str]
# Loads at most ``limit`` rows of a scope made by a model: (fact ids, vectors).
LoadScope = Callable[[Scope, str, int], Awaitable[tuple[FactIds, Matrix]]]
# One write's effect on a scope's rows (the same whether the rows already had it or not).
Change = Callable[["ScopeRows"], "ScopeRows"]


@dataclass(frozen=True)
class ScopeRows:
    """One scope's rows of one model: ids, and their vectors scaled to unit length (zero
    rows stay zero)."""

    scope: Scope
    model: str
    fact_ids: FactIds
    unit_vectors: Matrix

    def written(self, facts: Sequence[IndexedFact]) -> ScopeRows:
        """These rows after ``facts`` were written: the old rows of their ids gone, the new
        ones the scope selects and of its model added."""
        # One comparison per written row: faster than np.isin for the few rows of a write,
        # and every cached scope sees every write.
        kept = np.ones(len(self.fact_ids), dtype=bool)
        for fact in facts:
            kept &= self.fact_ids != fact.fact_id
        added = [
            fact
            for fact in facts
            if fact.model == self.model and self.scope.sees(fact.owner, fact.room)
        ]
        if not added and kept.all():
            return self
        if not added:
            return replace(self, fact_ids=self.fact_ids[kept], unit_vectors=self.unit_vectors[kept])
        vectors = np.stack([np.asarray(fact.vector, dtype=np.float32).ravel() for fact in added])
        added_ids = np.fromiter((fact.fact_id for fact in added), dtype=np.int64)
        return replace(
            self,
            fact_ids=np.concatenate([self.fact_ids[kept], added_ids]),
            unit_vectors=np.concatenate([self.unit_vectors[kept], normalise(vectors)]),
        )

    def without(self, removed: FactIds) -> ScopeRows:
        """These rows after the rows of ``removed`` ids were deleted."""
        kept = ~np.isin(self.fact_ids, removed)
        if kept.all():
            return self
        return replace(self, fact_ids=self.fact_ids[kept], unit_vectors=self.unit_vectors[kept])

    def search(
        self, vector: npt.NDArray[np.float32], limit: int, min_similarity: float | None
    ) -> list[ScoredFactId]:
        """The ``limit`` most cosine-similar rows, as LanceDB's cosine search ranks them."""
        if len(self.fact_ids) == 0 or limit < 1:
            return []
        query = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.linalg.norm(query))
        similarities = self.unit_vectors @ (query / norm if norm else query)
        chosen = np.arange(len(similarities))
        if min_similarity is not None:
            chosen = chosen[similarities >= min_similarity]
        if len(chosen) > limit:
            chosen = chosen[np.argpartition(-similarities[chosen], limit - 1)[:limit]]
        ordered = chosen[np.argsort(-similarities[chosen], kind="stable")]
        return [ScoredFactId(int(self.fact_ids[i]), float(similarities[i])) for i in ordered]


class ScopeVectorCache:
    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self._entries: OrderedDict[ScopeKey, ScopeRows] = OrderedDict()
        self._rows = 0
        # Scopes found larger than max_rows; forgotten at the next write, which may shrink them.
        self._too_large: set[ScopeKey] = set()
        # The changes made while each fill in progress loaded (None: a failed write).
        self._fills: dict[int, list[Change | None]] = {}
        self._next_fill = 0
        self.misses = 0

    async def rows(self, scope: Scope, model: str, load: LoadScope) -> ScopeRows | None:
        """The scope's rows of ``model``, from memory or loaded; None if they are too many
        to hold."""
        key: ScopeKey = (scope.owner, scope.room, scope.mode.value, model)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            return entry
        if key in self._too_large:
            return None
        self.misses += 1
        fill = self._next_fill
        self._next_fill += 1
        changes: list[Change | None] = []
        self._fills[fill] = changes
        try:
            fact_ids, vectors = await load(scope, model, self.max_rows + 1)
        finally:
            del self._fills[fill]
        if len(fact_ids) > self.max_rows:
            self._too_large.add(key)
            return None
        entry = ScopeRows(scope, model, fact_ids, normalise(vectors))
        replayed = [change for change in changes if change is not None]
        if len(replayed) < len(changes):
            return entry
        for change in replayed:
            entry = change(entry)
        if len(entry.fact_ids) <= self.max_rows:
            self._keep(key, entry)
        return entry

    def rows_written(self, facts: Sequence[IndexedFact]) -> None:
        """These rows were added or replaced (the write succeeded)."""
        self._update(lambda entry: entry.written(facts))

    def owners_changed(self, owners: Iterable[str]) -> None:
        """Rows of these owners may have been added or replaced (a write that failed)."""
        self._written(None)
        changed = set(owners)
        self._drop([key for key, entry in self._entries.items() if entry.scope.owner in changed])

    def facts_removed(self, fact_ids: Iterable[int]) -> None:
        """These rows were deleted."""
        removed = np.fromiter(fact_ids, dtype=np.int64)
        self._update(lambda entry: entry.without(removed))

    def clear(self) -> None:
        """Anything may have changed."""
        self._written(None)
        self._drop(list(self._entries))

    def _update(self, change: Change) -> None:
        """Every entry, and every fill in progress, after ``change``."""
        self._written(change)
        for key, entry in list(self._entries.items()):
            updated = change(entry)
            if updated is not entry and len(updated.fact_ids) <= self.max_rows:
                self._rows += len(updated.fact_ids) - len(entry.fact_ids)
                self._entries[key] = updated
            elif updated is not entry:
                self._drop([key])
        self._trim()

    def _written(self, change: Change | None) -> None:
        for changes in self._fills.values():
            changes.append(change)
        self._too_large.clear()

    def _keep(self, key: ScopeKey, entry: ScopeRows) -> None:
        self._drop([key])
        self._entries[key] = entry
        self._rows += len(entry.fact_ids)
        self._trim()

    def _trim(self) -> None:
        """Drop the least recently used entries until the rows fit."""
        while self._rows > self.max_rows:
            self._drop([next(iter(self._entries))])

    def _drop(self, keys: list[ScopeKey]) -> None:
        for key in keys:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self._rows -= len(entry.fact_ids)
