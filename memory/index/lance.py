"""The LanceDB vector index of active facts (derived data; SQLite is the truth).

Only the latest version is kept (reconcile can rebuild the rest). Compaction merges fragments
in tiers (memory/index/tiers.py) through ``pylance``, as LanceDB's ``optimize()`` rewrites
the whole table every time (docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiorwlock
import lance
import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from memory.errors import VectorIndexError
from memory.index.base import IndexedFact, ScoredFactId, StoredVector
from memory.index.filters import ids_where, key_digest, model_where, scope_where
from memory.index.scope_cache import FactIds, Matrix, ScopeVectorCache
from memory.index.tiers import DELETED_SHARE_TO_REWRITE, FragmentSize, next_merge
from memory.scope import Scope

log = logging.getLogger(__name__)

TABLE_NAME = "facts"
# Vectors held by the scope cache (384-dimensional float32 rows).
SCOPE_CACHE_ROWS = 50_000
# What LanceDB raises for unreadable files (a zeroed manifest gives a KeyError: no columns).
LANCE_ERRORS = (OSError, RuntimeError, ValueError, LookupError, pa.ArrowException)
COLUMNS = ("fact_id", "owner_digest", "room_digest", "text", "model", "vector")
# A merge can make a run of the next size class long enough to merge too.
MERGES_PER_COMPACTION = 32
# The indices take in new rows every so many compactions (and at the storage job, reconcile
# and erase): that rewrites every index, most of what a learned fact costs at scale.
MERGE_INDICES_EVERY = 8
_MERGE_ALL = 1_000_000


def _schema(dimension: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("fact_id", pa.int64(), nullable=False),
            pa.field("owner_digest", pa.string(), nullable=False),
            pa.field("room_digest", pa.string(), nullable=False),
            # Facts are short, the vectors dominate the size: stored plain, the words of a
            # forgotten fact can be checked to be gone from every byte of the folder.
            pa.field(
                "text",
                pa.string(),
                nullable=False,
                metadata={"lance-encoding:compression": "none"},
            ),
            pa.field("model", pa.string(), nullable=False),
            pa.field("vector", pa.list_(pa.float32(), dimension), nullable=False),
        ]
    )


def _vector_dimension(schema: pa.Schema) -> int:
    field_type = schema.field("vector").type
    return int(field_type.list_size)


@dataclass(frozen=True, slots=True)
class IndexSpace:
    folder_bytes: int
    live_bytes: int
    versions: int

    @property
    def reclaimable_bytes(self) -> int:
        """Old versions, rows deleted but still in their files, leftovers of failed writes."""
        return max(0, self.folder_bytes - self.live_bytes)


@contextmanager
def failing(message: str) -> Iterator[None]:
    """LanceDB's errors inside, raised as :class:`VectorIndexError` ("message: error")."""
    try:
        yield
    except LANCE_ERRORS as error:
        raise VectorIndexError(f"{message}: {error}") from error


def folder_bytes(path: Path) -> int:
    return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())


class LanceFactIndex:
    """Facts' vectors in one LanceDB table, searched with cosine distance and a prefilter.

    Writes come from one task at a time (the store's writer), reads from any: reads hold
    ``files`` shared, the removal of old versions' files holds it alone (as does the
    replacement of a broken folder, :mod:`memory.index.healing`, which passes its lock on to
    each index it opens).
    """

    def __init__(
        self,
        table: Any,
        path: Path,
        *,
        optimize_every: int = 32,
        scope_cache_rows: int = SCOPE_CACHE_ROWS,
        files: aiorwlock.RWLock | None = None,
    ) -> None:
        self._table = table
        self.path = path
        # Each write adds a fragment, and search slows with each: compacted every few writes.
        self._optimize_every = optimize_every
        self._writes_since_optimize = 0
        self._compactions_since_merge = 0
        self.files = files or aiorwlock.RWLock()
        # Searches of a scope seen lately are served from memory; every write below tells it.
        self.scope_cache = ScopeVectorCache(scope_cache_rows)

    @classmethod
    async def open(
        cls,
        path: Path | str,
        *,
        dimension: int,
        optimize_every: int = 32,
        full_text_index: bool = False,
        scope_cache_rows: int = SCOPE_CACHE_ROWS,
        files: aiorwlock.RWLock | None = None,
    ) -> LanceFactIndex:
        """Open the index, (re)creating the table, empty, if it is missing or of another
        dimension; ``full_text_index`` builds LanceDB's full-text index if there is none."""
        directory = Path(path)
        with failing(f"cannot open the vector index at {directory}"):
            connection = await _connect(directory)
            tables = (await connection.list_tables()).tables
            table = None
            if TABLE_NAME in tables:
                table = await connection.open_table(TABLE_NAME)
                existing = _vector_dimension(await table.schema())
                if existing != dimension:
                    log.warning(
                        "vector index has dimension %d, the embedder %d: rebuilding it",
                        existing,
                        dimension,
                    )
                    await connection.drop_table(TABLE_NAME)
                    table = None
            if table is None:
                table = await connection.create_table(TABLE_NAME, schema=_schema(dimension))
            index = cls(
                table,
                directory,
                optimize_every=optimize_every,
                scope_cache_rows=scope_cache_rows,
                files=files,
            )
            await index._create_indices(full_text_index)
            return index

    @classmethod
    async def open_read_only(cls, path: Path | str) -> LanceFactIndex | None:
        """The existing index, to read beside the process that writes it, or None if
        there is none yet. Creates, drops, indexes and compacts nothing (``mnemo doctor``)."""
        directory = Path(path)
        # connect_async creates a missing folder: look before connecting.
        if not (directory / f"{TABLE_NAME}.lance").is_dir():
            return None
        with failing(f"cannot open the vector index at {directory}"):
            connection = await _connect(directory)
            table = await connection.open_table(TABLE_NAME)
        return cls(table, directory)

    async def dimension(self) -> int:
        with failing("cannot read the vector index"):
            return _vector_dimension(await self._table.schema())

    async def _create_indices(self, full_text: bool) -> None:
        indexed = await self._indexed_columns()
        # Without it the scope prefilter scans every row.
        if "owner_digest" not in indexed:
            await self._table.create_index("owner_digest", config=lancedb.index.BTree())
        if full_text and "text" not in indexed:
            await self._table.create_index("text", config=lancedb.index.FTS())

    async def _indexed_columns(self) -> set[str]:
        return {column for config in await self._table.list_indices() for column in config.columns}

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        if not facts:
            return
        rows = [
            {
                "fact_id": fact.fact_id,
                "owner_digest": key_digest(fact.owner),
                "room_digest": key_digest(fact.room),
                "text": fact.text,
                "model": fact.model,
                "vector": np.asarray(fact.vector, dtype=np.float32),
            }
            for fact in facts
        ]
        written = False
        try:
            with failing("cannot write to the vector index"):
                await (
                    self._table.merge_insert("fact_id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(rows)
                )
                written = True
                await self._count_write()
        finally:
            if written:
                self.scope_cache.rows_written(facts)
            else:
                self.scope_cache.owners_changed(fact.owner for fact in facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        if not fact_ids:
            return
        try:
            with failing("cannot delete from the vector index"):
                await self._table.delete(ids_where(list(fact_ids)))
                await self._count_write()
        finally:
            self.scope_cache.facts_removed(fact_ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        cached = await self.scope_cache.rows(scope, model, self._scope_rows)
        if cached is not None:
            return cached.search(vector, limit, min_similarity)
        query = (
            self._table.vector_search(np.asarray(vector, dtype=np.float32).ravel())
            .distance_type("cosine")
            .where(_search_where(scope, model))
            .select(["fact_id", "_distance"])
            .limit(limit)
        )
        if min_similarity is not None:
            query = query.distance_range(upper_bound=1.0 - min_similarity)
        with failing("cannot search the vector index"):
            async with self.files.reader:
                rows = await query.to_list()
        # LanceDB's cosine distance is 1 - cosine similarity.
        return [ScoredFactId(int(row["fact_id"]), 1.0 - float(row["_distance"])) for row in rows]

    async def _scope_rows(self, scope: Scope, model: str, limit: int) -> tuple[FactIds, Matrix]:
        """At most ``limit`` rows of ``scope`` made by ``model``: their ids and vectors (for
        the scope cache)."""
        with failing("cannot search the vector index"):
            async with self.files.reader:
                table = await (
                    self._table.query()
                    .where(_search_where(scope, model))
                    .select(["fact_id", "vector"])
                    .limit(limit)
                    .to_arrow()
                )
            fact_ids: FactIds = table["fact_id"].to_numpy().astype(np.int64)
            return fact_ids, _vectors(table)

    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        """Facts visible in ``scope`` whose text matches ``query`` (BM25 in ``similarity``)."""
        if not query.strip():
            return []
        with failing("cannot search the facts' text"):
            async with self.files.reader:
                rows = await (
                    self._table.query()
                    .nearest_to_text(query, columns="text")
                    .where(scope_where(scope))
                    .select(["fact_id", "_score"])
                    .limit(limit)
                    .to_list()
                )
        return [ScoredFactId(int(row["fact_id"]), float(row["_score"])) for row in rows]

    async def stored_vectors(self, fact_ids: Sequence[int]) -> dict[int, StoredVector]:
        """The vectors held for these facts, with their model (``mnemo copy-store``)."""
        if not fact_ids:
            return {}
        with failing("cannot read the vector index"):
            async with self.files.reader:
                table = await (
                    self._table.query()
                    .where(ids_where(list(fact_ids)))
                    .select(["fact_id", "model", "vector"])
                    .to_arrow()
                )
        vectors = _vectors(table)
        ids, models = table["fact_id"].to_pylist(), table["model"].to_pylist()
        return {
            int(fact_id): StoredVector(str(model), vectors[row])
            for row, (fact_id, model) in enumerate(zip(ids, models, strict=True))
        }

    async def indexed_models(self) -> dict[int, str]:
        with failing("cannot read the vector index"):
            async with self.files.reader:
                rows = await self._table.query().select(["fact_id", "model"]).to_arrow()
        return dict(zip(rows["fact_id"].to_pylist(), rows["model"].to_pylist(), strict=True))

    async def verify(self) -> None:
        """Read every row, column and index of the current version from disk; raises
        :class:`VectorIndexError` if any of it is unreadable (zeroed, overwritten, gone)."""
        with failing(f"the vector index at {self.path} is unreadable"):
            probe = np.ones(_vector_dimension(await self._table.schema()), dtype=np.float32)
            async with self.files.reader:
                async for _ in await self._table.query().to_batches():
                    pass
                await self._table.vector_search(probe).where("owner_digest = ''").to_list()
                if "text" in await self._indexed_columns():
                    await self._table.query().nearest_to_text("probe", columns="text").to_list()

    async def count(self) -> int:
        async with self.files.reader:
            return int(await self._table.count_rows())

    async def optimize(self) -> None:
        """Compact small fragments, index the new rows, and remove every older version."""
        with failing("cannot compact the vector index"):
            await self._optimize()

    async def erase(self, fact_ids: Sequence[int]) -> None:
        """Delete the rows, and leave no byte of them (or of any row deleted before) in any
        file under the index folder: every live row and the full-text index are rewritten,
        and every older version is removed."""
        try:
            with failing("cannot erase from the vector index"):
                if fact_ids:
                    await self._table.delete(ids_where(list(fact_ids)))
                await self._table.update(
                    updates_sql={column: column for column in COLUMNS}, where="true"
                )
                if "text" in await self._indexed_columns():
                    await self._table.create_index("text", config=lancedb.index.FTS(), replace=True)
                await self._optimize()
        finally:
            self.scope_cache.clear()

    async def compact(self) -> None:
        """Give back every byte the live rows do not need (``mnemo compact``): the same
        rewrite as :meth:`erase`, without deleting anything."""
        await self.erase([])

    async def space(self) -> IndexSpace:
        """The folder's size, and how much of it the current rows and indices need."""
        with failing("cannot read the vector index"):
            async with self.files.reader:
                stats = await self._table.stats()
                indices = await self._table.list_indices()
                versions = len(await self._table.list_versions())
        index_bytes = sum(int(config.size_bytes or 0) for config in indices)
        fragments = stats["fragment_stats"]
        stored_rows = fragments["num_fragments"] * fragments["lengths"]["mean"]
        live_share = stats["num_rows"] / stored_rows if stored_rows else 1.0
        live = index_bytes + round((stats["total_bytes"] - index_bytes) * live_share)
        return IndexSpace(await asyncio.to_thread(folder_bytes, self.path), live, versions)

    async def fragment_count(self) -> int:
        stats = await self._table.stats()
        return int(stats["fragment_stats"]["num_fragments"])

    async def _count_write(self) -> None:
        self._writes_since_optimize += 1
        if self._writes_since_optimize >= self._optimize_every:
            merge = self._compactions_since_merge + 1 >= MERGE_INDICES_EVERY
            await self._optimize(merge_indices=merge)

    async def _optimize(self, *, merge_indices: bool = True) -> None:
        # Searches stay on the version they opened; only the removal of old files waits.
        dataset = table_folder(self.path)
        await asyncio.to_thread(_compact_in_tiers, dataset, merge_indices)
        await self._table.checkout_latest()
        async with self.files.writer:
            await asyncio.to_thread(_remove_old_versions, dataset)
        self._writes_since_optimize = 0
        self._compactions_since_merge = 0 if merge_indices else self._compactions_since_merge + 1

    async def aclose(self) -> None:
        self._table.close()


def _vectors(table: pa.Table) -> Matrix:
    """The ``vector`` column of a query's rows as one float32 matrix."""
    values = table["vector"].combine_chunks().flatten().to_numpy()
    shape = (table.num_rows, _vector_dimension(table.schema))
    return np.asarray(values, dtype=np.float32).reshape(shape)


def _search_where(scope: Scope, model: str) -> str:
    """The rows a vector search may compare: the scope's, of the query vector's model."""
    return f"{scope_where(scope)} AND {model_where(model)}"


async def _connect(directory: Path) -> Any:
    # With a metadata cache LanceDB reads zeroed files as rows of zeros instead of failing,
    # and the self-healing index never hears of the damage.
    session = lancedb.Session(metadata_cache_size_bytes=0)
    return await lancedb.connect_async(str(directory), session=session)


def _compact_in_tiers(dataset: Path, merge_indices: bool) -> None:
    table = lance.dataset(str(dataset))
    if merge_indices:
        # First, so that every fragment is covered alike and any tier may merge.
        table.optimize.optimize_indices(num_indices_to_merge=_MERGE_ALL)
        table = lance.dataset(str(dataset))
    for _ in range(MERGES_PER_COMPACTION):
        merged = next_merge(_fragment_sizes(table))
        if not merged:
            break
        ids = {fragment.fragment_id for fragment in merged}
        others = [fragment.fragment_id for fragment in table.get_fragments()]
        table.optimize.compact_files(
            # One fragment out, and every fragment in is below the target, so each is taken.
            target_rows_per_fragment=sum(fragment.live_rows for fragment in merged) + 1,
            excluded_fragment_ids=[fragment_id for fragment_id in others if fragment_id not in ids],
            materialize_deletions_threshold=DELETED_SHARE_TO_REWRITE,
        )
        table = lance.dataset(str(dataset))


def _fragment_sizes(table: lance.LanceDataset) -> list[FragmentSize]:
    coverage: dict[int, set[str]] = {}
    for index in table.describe_indices():
        for segment in index.segments:
            for fragment_id in segment.fragment_ids:
                coverage.setdefault(fragment_id, set()).add(str(segment.uuid))
    sizes = []
    for fragment in table.get_fragments():
        deletions = fragment.metadata.deletion_file
        deleted = deletions.num_deleted_rows if deletions is not None else 0
        covered = frozenset(coverage.get(fragment.fragment_id, ()))
        sizes.append(
            FragmentSize(fragment.fragment_id, fragment.metadata.physical_rows, deleted, covered)
        )
    return sizes


def _remove_old_versions(dataset: Path) -> None:
    # Files of failed writes too (delete_unverified): no other process writes this folder.
    lance.dataset(str(dataset)).cleanup_old_versions(
        older_than=timedelta(0), delete_unverified=True
    )


def table_folder(path: Path | str) -> Path:
    """Where the table's files live inside the index folder."""
    return Path(path) / f"{TABLE_NAME}.lance"


async def verify_files(path: Path | str) -> None:
    """Read the index at ``path`` whole, through a new connection (an open one may answer
    from its cache); raises :class:`VectorIndexError` if it is missing or unreadable."""
    directory = Path(path)
    index = await LanceFactIndex.open_read_only(directory)
    if index is None:
        raise VectorIndexError(f"the vector index at {directory} is missing")
    try:
        await index.verify()
    finally:
        await index.aclose()


async def read_space(path: Path | str) -> IndexSpace | None:
    """The space of the index at ``path`` without creating or changing anything (for the
    doctor, beside a running bot); None if there is no index yet."""
    index = await LanceFactIndex.open_read_only(path)
    if index is None:
        return None
    try:
        return await index.space()
    finally:
        await index.aclose()
