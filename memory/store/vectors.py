"""The vector index in PostgreSQL: pgvector rows beside the facts, in the same database.

Search joins the facts with the store's own scope condition, exact per scope (numbers in
docs/benchmarks.md). The store writes inside its own transaction (:class:`PgVectorWrites`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import numpy as np
import numpy.typing as npt
from sqlalchemy import String, cast, delete, func, select
from sqlalchemy.dialects.postgresql import TSQUERY, insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from memory.errors import LockTimeoutError, StoreError, VectorIndexError
from memory.index.base import IndexedFact, ScoredFactId, StoredVector
from memory.records import FactStatus
from memory.scope import Scope
from memory.store.database import Database
from memory.store.facts import visible_in
from memory.store.people_lock import lock_people
from memory.store.schema import FactRow, FactVectorRow, rowcount

log = logging.getLogger(__name__)

# The language of the full-text search (stemming, stop words), as LanceDB's English default.
TEXT_SEARCH_CONFIGURATION = "english"


class PgVectorWrites:
    """Index writes inside a transaction that is already open (the store's)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def upsert(self, facts: Sequence[IndexedFact]) -> None:
        if not facts:
            return
        rows = [
            {
                "fact_id": fact.fact_id,
                "model": fact.model,
                "embedding": np.asarray(fact.vector, dtype=np.float32),
            }
            for fact in facts
        ]
        statement = insert(FactVectorRow).values(rows)
        self.session.execute(
            statement.on_conflict_do_update(
                index_elements=[FactVectorRow.fact_id],
                set_={
                    "model": statement.excluded.model,
                    "embedding": statement.excluded.embedding,
                },
            )
        )

    def delete(self, fact_ids: Sequence[int]) -> None:
        if fact_ids:
            self.session.execute(
                delete(FactVectorRow).where(FactVectorRow.fact_id.in_(list(fact_ids)))
            )

    def erase(self, fact_ids: Sequence[int]) -> None:
        """The rows go with their facts (ON DELETE CASCADE); this removes any left over."""
        self.delete(fact_ids)


class PgVectorIndex:
    """Search and repair of the pgvector rows; implements the ``VectorIndex`` port."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @classmethod
    async def open(cls, database: Database, *, dimension: int) -> PgVectorIndex:
        """Drop the vectors of another dimension (a new model): reconcile re-embeds them."""
        index = cls(database)
        async with index._session() as session:
            result = await session.execute(
                delete(FactVectorRow).where(func.vector_dims(FactVectorRow.embedding) != dimension)
            )
        dropped = rowcount(result)
        if dropped:
            log.warning("%d vectors of another dimension than %d dropped", dropped, dimension)
        return index

    def writes_in(self, session: Session) -> PgVectorWrites:
        """Inside the store's transaction, which must be on this very database."""
        if session.get_bind() is not self._database.engine.sync_engine:
            raise VectorIndexError(
                "the vectors must be written in the facts' own PostgreSQL database: open "
                "the store and the pgvector index on the same database"
            )
        return PgVectorWrites(session)

    @asynccontextmanager
    async def _session(self, *, lock_timeouts_pass: bool = False) -> AsyncIterator[AsyncSession]:
        """A transaction whose errors are the index's; with ``lock_timeouts_pass`` a lock
        held too long stays a :class:`LockTimeoutError` (the write is made again later)."""
        try:
            async with self._database.session() as session:
                yield session
        except StoreError as error:
            if lock_timeouts_pass and isinstance(error, LockTimeoutError):
                raise
            raise VectorIndexError(
                f"the vectors in PostgreSQL could not be used: {error}"
            ) from error

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        """Write the rows of the facts still active, read again under their owners' locks
        (the rows may come from an earlier read); ``FOR KEY SHARE`` holds off the purge."""
        if not facts:
            return
        still_active = (
            select(FactRow.id)
            .where(
                FactRow.id.in_([fact.fact_id for fact in facts]),
                FactRow.status == FactStatus.ACTIVE.value,
            )
            .with_for_update(read=True, key_share=True)
        )

        def write(session: Session) -> None:
            lock_people(session, [fact.owner for fact in facts])
            kept = set(session.scalars(still_active).all())
            PgVectorWrites(session).upsert([fact for fact in facts if fact.fact_id in kept])

        async with self._session(lock_timeouts_pass=True) as session:
            await session.run_sync(write)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        async with self._session() as session:
            await session.run_sync(lambda sync: PgVectorWrites(sync).delete(fact_ids))

    async def erase(self, fact_ids: Sequence[int]) -> None:
        """The rows go with their facts (ON DELETE CASCADE); this removes any left over."""
        await self.delete(fact_ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        distance = FactVectorRow.embedding.cosine_distance(
            np.asarray(vector, dtype=np.float32).ravel()
        )
        query = (
            select(FactRow.id, distance.label("distance"))
            .join(FactVectorRow, FactVectorRow.fact_id == FactRow.id)
            .where(
                visible_in(scope),
                FactRow.status == FactStatus.ACTIVE.value,
                FactVectorRow.model == model,
            )
            .order_by(distance, FactRow.id)
            .limit(limit)
        )
        if min_similarity is not None:
            query = query.where(distance <= 1.0 - min_similarity)
        async with self._session() as session:
            rows = (await session.execute(query)).all()
        # pgvector's cosine distance is 1 - cosine similarity.
        return [ScoredFactId(int(fact_id), 1.0 - float(value)) for fact_id, value in rows]

    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        """Indexed active facts in ``scope`` sharing a word stem with ``query`` (any word),
        best first; ``similarity`` holds ``ts_rank_cd``."""
        if not query.strip():
            return []
        words = func.plainto_tsquery(TEXT_SEARCH_CONFIGURATION, query)
        any_word = cast(func.replace(cast(words, String), "&", "|"), TSQUERY)
        document = func.to_tsvector(TEXT_SEARCH_CONFIGURATION, FactRow.text)
        rank = func.ts_rank_cd(document, any_word)
        statement = (
            select(FactRow.id, rank.label("rank"))
            .join(FactVectorRow, FactVectorRow.fact_id == FactRow.id)
            .where(
                visible_in(scope),
                FactRow.status == FactStatus.ACTIVE.value,
                document.bool_op("@@")(any_word),
            )
            .order_by(rank.desc(), FactRow.id)
            .limit(limit)
        )
        async with self._session() as session:
            rows = (await session.execute(statement)).all()
        return [ScoredFactId(int(fact_id), float(value)) for fact_id, value in rows]

    async def stored_vectors(self, fact_ids: Sequence[int]) -> dict[int, StoredVector]:
        """The vectors held for these facts, with their model (``mnemo copy-store``)."""
        query = select(FactVectorRow).where(FactVectorRow.fact_id.in_(list(fact_ids)))
        async with self._session() as session:
            rows = (await session.scalars(query)).all()
        return {
            row.fact_id: StoredVector(row.model, np.asarray(row.embedding, dtype=np.float32))
            for row in rows
        }

    async def indexed_models(self) -> dict[int, str]:
        """The active facts that have a vector, with the model that made it."""
        query = (
            select(FactVectorRow.fact_id, FactVectorRow.model)
            .join(FactRow, FactRow.id == FactVectorRow.fact_id)
            .where(FactRow.status == FactStatus.ACTIVE.value)
        )
        async with self._session() as session:
            return {int(fact_id): str(model) for fact_id, model in (await session.execute(query))}

    async def count(self) -> int:
        async with self._session() as session:
            return int(
                (await session.execute(select(func.count(FactVectorRow.fact_id)))).scalar_one()
            )

    async def optimize(self) -> None:
        """Nothing to compact: PostgreSQL's autovacuum keeps the table and its statistics."""

    async def aclose(self) -> None:
        """The database belongs to the store, which closes it."""
