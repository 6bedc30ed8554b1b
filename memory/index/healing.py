"""An index that repairs itself: broken files are replaced and refilled from the database.

When an operation fails and the files read from disk are broken, the folder is replaced by
an empty index and ``refill`` (reconcile) fills it in the background; searches fail
meanwhile (recall answers without memories). An error of a readable index (a full disk) is
passed on unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import aiorwlock
import numpy as np
import numpy.typing as npt

from memory.errors import VectorIndexError
from memory.index.base import IndexedFact, ScoredFactId
from memory.index.lance import (
    LANCE_ERRORS,
    IndexSpace,
    LanceFactIndex,
    verify_files,
)
from memory.scope import Scope

log = logging.getLogger(__name__)

Refill = Callable[[LanceFactIndex], Awaitable[object]]
T = TypeVar("T")


MOVED_ASIDE_SUFFIX = ".broken-"
RECHECK_AFTER_ERROR_SECONDS = 60.0


class IndexRebuildingError(VectorIndexError):
    """The index is being rebuilt; ``rebuild`` numbers the rebuilds, to report each once."""

    def __init__(self, message: str, *, rebuild: int) -> None:
        super().__init__(message)
        self.rebuild = rebuild


class HealingIndex:
    """A :class:`LanceFactIndex` (the ``VectorIndex`` port) that rebuilds broken files.

    One of the tasks that meet broken files replaces them, holding the index files' lock
    alone: the lock the Lance index takes to remove old versions' files, shared by each index
    opened here, so no search reads the folder while it is moved aside.
    """

    def __init__(
        self,
        index: LanceFactIndex,
        *,
        dimension: int,
        refill: Refill,
        full_text_index: bool = False,
    ) -> None:
        self._index = index
        self.path = index.path
        self._dimension = dimension
        self._refill = refill
        self._full_text_index = full_text_index
        self._rebuild: asyncio.Task[None] | None = None
        self.rebuilds = 0
        self.needs_refill = False
        self._last_check_after_error = -RECHECK_AFTER_ERROR_SECONDS
        # Each replacement of broken files, for the operator (``mnemo reconcile`` says so).
        self.replacements: list[str] = []

    @classmethod
    async def open(
        cls,
        path: Path | str,
        *,
        dimension: int,
        refill: Refill,
        full_text_index: bool = False,
        replace_broken: bool = True,
    ) -> HealingIndex:
        """Open the index, replacing one that cannot be opened (raised instead with
        ``replace_broken=False``); ``needs_refill`` says the index is empty."""
        directory = Path(path)
        await asyncio.to_thread(_remove_moved_aside_copies, directory)
        problem: VectorIndexError | None = None
        try:
            index = await LanceFactIndex.open(
                directory, dimension=dimension, full_text_index=full_text_index
            )
        except VectorIndexError as error:
            if not replace_broken:
                raise VectorIndexError(
                    f"{error}; `mnemo reconcile` rebuilds it from the database"
                ) from error
            problem = error
            index = await _replace_folder(directory, dimension, full_text_index, error)
        healing = cls(index, dimension=dimension, refill=refill, full_text_index=full_text_index)
        healing.needs_refill = problem is not None or await index.count() == 0
        if problem is not None:
            healing.replacements.append(str(problem))
        return healing

    @property
    def rebuilding(self) -> bool:
        return self._rebuild is not None and not self._rebuild.done()

    @property
    def current(self) -> LanceFactIndex:
        """The Lance index in use now (a new one after each rebuild)."""
        return self._index

    def start_rebuild(self) -> None:
        """Refill the index from the database in the background."""
        if not self.rebuilding:
            self.rebuilds += 1
            self._rebuild = asyncio.create_task(self._run_refill(), name="index rebuild")

    async def wait_rebuilt(self) -> None:
        if self._rebuild is not None:
            await asyncio.shield(self._rebuild)

    async def heal_if_broken(self, *, after_error: bool = False) -> bool:
        """If the files read from disk are broken, replace them and start the refill; True if
        replaced (now or by a rebuild still running). After an error (``after_error``) the
        files are read at most once a minute, not on every failing search."""
        async with self._index.files.writer:
            if self.rebuilding:
                return True
            if after_error:
                # Only checks after errors count: a check at start or by reconcile says
                # nothing about the error just met.
                now = time.monotonic()
                if now - self._last_check_after_error < RECHECK_AFTER_ERROR_SECONDS:
                    return False
                self._last_check_after_error = now
            problem = await self._problem()
            if problem is None:
                return False
            old = self._index
            self._index = await _replace_folder(
                self.path, self._dimension, self._full_text_index, problem, files=old.files
            )
            self.replacements.append(str(problem))
            with contextlib.suppress(VectorIndexError, *LANCE_ERRORS):
                await old.aclose()
            self.start_rebuild()
            return True

    async def _problem(self) -> VectorIndexError | None:
        try:
            await verify_files(self.path)
        except VectorIndexError as error:
            return error
        return None

    async def _run_refill(self) -> None:
        started = time.perf_counter()
        try:
            await self._refill(self._index)
        except Exception:
            # The scheduled reconcile finishes the job later; searches work meanwhile.
            log.exception("rebuilding the vector index from the database stopped")
            return
        log.info(
            "vector index rebuilt from the database: %d facts in %.1f s",
            await self._index.count(),
            time.perf_counter() - started,
        )

    async def _guarded(self, operation: Callable[[LanceFactIndex], Awaitable[T]]) -> T:
        try:
            return await operation(self._index)
        except VectorIndexError:
            if await self.heal_if_broken(after_error=True):
                raise IndexRebuildingError(
                    "the vector index was unreadable and is being rebuilt from the database",
                    rebuild=self.rebuilds,
                ) from None
            raise

    def _refuse_while_rebuilding(self) -> None:
        if self.rebuilding:
            raise IndexRebuildingError(
                "the vector index is being rebuilt from the database", rebuild=self.rebuilds
            )

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        await self._guarded(lambda index: index.upsert(facts))

    async def delete(self, fact_ids: Sequence[int]) -> None:
        await self._guarded(lambda index: index.delete(fact_ids))

    async def erase(self, fact_ids: Sequence[int]) -> None:
        try:
            await self._index.erase(fact_ids)
        except VectorIndexError:
            if not await self.heal_if_broken(after_error=True):
                raise
            # The broken files are deleted, and the refill writes only facts still active
            # after the forget: the rows are gone as asked.

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        self._refuse_while_rebuilding()
        return await self._guarded(
            lambda index: index.search(
                scope, vector, model=model, limit=limit, min_similarity=min_similarity
            )
        )

    async def full_text_search(self, scope: Scope, query: str, *, limit: int) -> list[ScoredFactId]:
        self._refuse_while_rebuilding()
        return await self._guarded(lambda index: index.full_text_search(scope, query, limit=limit))

    async def indexed_models(self) -> dict[int, str]:
        """What the index holds, after reading all of it from disk: reconcile (scheduled,
        or ``mnemo reconcile``) thereby finds broken files and has them rebuilt first."""
        await self.wait_rebuilt()
        if await self.heal_if_broken():
            await self.wait_rebuilt()
        return await self._index.indexed_models()

    async def compact(self) -> None:
        await self.wait_rebuilt()
        await self._guarded(lambda index: index.compact())

    async def space(self) -> IndexSpace:
        return await self._guarded(lambda index: index.space())

    async def count(self) -> int:
        return await self._guarded(lambda index: index.count())

    async def optimize(self) -> None:
        await self._guarded(lambda index: index.optimize())

    async def aclose(self) -> None:
        if self._rebuild is not None and not self._rebuild.done():
            self._rebuild.cancel()
            await asyncio.gather(self._rebuild, return_exceptions=True)
        await self._index.aclose()


async def _replace_folder(
    path: Path,
    dimension: int,
    full_text_index: bool,
    problem: VectorIndexError,
    *,
    files: aiorwlock.RWLock | None = None,
) -> LanceFactIndex:
    """Move the broken folder aside, create an empty index in its place (with the files lock
    ``files``), delete the copy."""
    try:
        aside = await asyncio.to_thread(_move_aside, path)
    except OSError as error:
        raise VectorIndexError(
            f"the vector index at {path} is unreadable and cannot be moved aside "
            f"({error.strerror}): delete it by hand, then run `mnemo reconcile`"
        ) from error
    index = await LanceFactIndex.open(
        path, dimension=dimension, full_text_index=full_text_index, files=files
    )
    await asyncio.to_thread(_delete, aside)
    log.warning(
        "vector index at %s was unreadable (%s): replaced by an empty one and rebuilding it "
        "from the database; replies go on without memories meanwhile",
        path,
        problem,
    )
    return index


def _move_aside(path: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    aside = path.with_name(f"{path.name}{MOVED_ASIDE_SUFFIX}{stamp}")
    if path.exists() or path.is_symlink():
        path.rename(aside)
    return aside


def _remove_moved_aside_copies(path: Path) -> None:
    """Copies left by a crash between moving a broken folder aside and deleting it."""
    for copy in path.parent.glob(f"{path.name}{MOVED_ASIDE_SUFFIX}*"):
        _delete(copy)


def _delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
