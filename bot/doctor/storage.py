"""Doctor checks of the local parts: data folder, database, embedding model, vector index,
and the space they take.

They run beside a bot that is writing (``mnemo doctor`` takes no lock), so they open the
database and the index read-only and create, upgrade or repair nothing: a missing
database or index, or an old schema, is reported, not fixed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import URL

from bot.components import build_embedder, embedding_dimension
from bot.config import Config
from bot.data_folder import readable_problem, running_holder
from bot.doctor.base import CheckResult
from memory.embedding.languages import MULTILINGUAL_MODEL, english_first, share_not_english
from memory.errors import MemoryLayerError, VectorIndexError
from memory.index import LanceFactIndex
from memory.index.lance import folder_bytes, read_space
from memory.indexing import Reconcilable, reconcile
from memory.store import Store, read_only_sqlite_url
from memory.store.migrations import SchemaState, describe, inspect_schema
from memory.store.space import DatabaseSpace, database_space
from memory.store.vectors import PgVectorIndex

# Below this, what compaction would give back is not worth a warning.
RECLAIMABLE_WARNING_BYTES = 64 * 2**20

NEEDS_FOLDER = "needs a usable data folder (see the data folder line)"
# Fewer facts say nothing about the language a store is kept in.
LANGUAGE_SAMPLE_MINIMUM = 20
SPACE = "storage space"


async def check_data_folder(config: Config) -> CheckResult:
    data_dir = config.storage.data_dir
    problem = readable_problem(data_dir)
    if problem is not None:
        return CheckResult.failed("data folder", problem)
    pid = running_holder(data_dir)
    who = "no Mnemo process is using it" if pid is None else f"in use by Mnemo (PID {pid})"
    return CheckResult.passed("data folder", f"{data_dir} ({who})")


def folder_unusable(config: Config) -> bool:
    """SQLite and LanceDB live in the data folder; a PostgreSQL database does not."""
    return config.storage.database_url is None and (
        readable_problem(config.storage.data_dir) is not None
    )


def read_only_url(config: Config) -> URL:
    """The database, opened so that nothing can be created or changed in it."""
    if config.storage.database_url is not None:
        return config.storage.database  # the doctor's PostgreSQL reads are plain SELECTs
    return read_only_sqlite_url(config.storage.database_path)


async def check_database(config: Config) -> CheckResult:
    """The schema revision and whether it is current; the doctor never upgrades it."""
    if folder_unusable(config):
        return CheckResult.skipped("database", NEEDS_FOLDER)
    path = describe(config.storage.database)
    try:
        state = await inspect_schema(read_only_url(config))
        if state.is_empty:
            detail = f"{path}: none yet; the bot makes it at start-up (revision {state.head})"
            return CheckResult.passed("database", detail)
        if not state.is_current:
            return schema_not_current("database", path, state)
        store = Store.open_read_only(config.storage.database)
        try:
            pending = await store.read(lambda transaction: transaction.pending.count())
        finally:
            await store.aclose()
    except MemoryLayerError as error:
        return CheckResult.failed("database", f"{path}: {error}")
    return CheckResult.passed(
        "database",
        f"{path}: schema revision {state.revision} (current), "
        f"{pending} messages waiting for memory",
    )


def schema_not_current(name: str, where: str, state: SchemaState) -> CheckResult:
    if not state.known:
        return CheckResult.failed(
            name,
            f"{where}: schema revision {state.revision} is newer than this Mnemo (it knows up to "
            f"{state.head}): run the newer Mnemo, or restore the backup made before its upgrade",
        )
    made = " (made before migrations)" if state.legacy else ""
    return CheckResult.warned(
        name,
        f"{where}: schema revision {state.revision}{made}, this Mnemo needs {state.head}: "
        "the bot upgrades it at start-up after a backup copy, or run `mnemo migrate`",
    )


async def check_embedding(config: Config) -> CheckResult:
    embedder = build_embedder(config.embedding)
    try:
        dimension = await embedding_dimension(embedder)
    except MemoryLayerError as error:
        return CheckResult.failed("embedding model", str(error))
    finally:
        await embedder.aclose()
    return CheckResult.passed("embedding model", f"{embedder.model_name} ({dimension} dimensions)")


async def check_memory_language(config: Config) -> CheckResult:
    """A warning when most stored facts are not English and the model is English-first."""
    name = "memory language"
    if folder_unusable(config):
        return CheckResult.skipped(name, NEEDS_FOLDER)
    try:
        state = await inspect_schema(read_only_url(config))
        if state.is_empty or not state.is_current:
            return CheckResult.skipped(name, "checked once the database is current")
        store = Store.open_read_only(config.storage.database)
        try:
            facts = await store.read(lambda transaction: transaction.facts.admin_active_facts())
            texts = [fact.text for fact in facts]
        finally:
            await store.aclose()
    except MemoryLayerError as error:
        return CheckResult.failed(name, str(error))
    other, total = share_not_english(texts)
    model = config.embedding.model
    found = f"{other} of {total} facts do not read as English"
    if not english_first(model):
        return CheckResult.passed(name, f"{found}; {model} is not known to be English-first")
    if total < LANGUAGE_SAMPLE_MINIMUM or other * 2 <= total:
        return CheckResult.passed(name, f"{found}; {model} is English-first")
    return CheckResult.warned(
        name,
        f"{found}, and {model} is English-first: recall and the candidate search are weak "
        f'for them. Set embedding.model = "{MULTILINGUAL_MODEL}" (multilingual, more CPU per '
        "message; see docs/benchmarks.md; its candidate threshold comes with it unless "
        "memory.candidate_threshold is set), then run `mnemo reconcile` to re-embed the facts",
    )


async def check_index(config: Config) -> CheckResult:
    storage = config.storage
    if folder_unusable(config):
        return CheckResult.skipped("vector index", NEEDS_FOLDER)
    try:
        state = await inspect_schema(read_only_url(config))
        if state.is_empty:
            return CheckResult.passed("vector index", "none yet; the bot makes it at start-up")
        if not state.is_current:
            return CheckResult.skipped("vector index", "checked once the database is current")
        if storage.database_url is not None:
            return await compare_index(config, None)
        index = await LanceFactIndex.open_read_only(storage.index_path)
    except VectorIndexError as error:
        return CheckResult.failed("vector index", unreadable(error))
    except MemoryLayerError as error:
        return CheckResult.failed("vector index", str(error))
    if index is None:
        return CheckResult.passed(
            "vector index", "none yet; the bot builds it from the database at start-up"
        )
    return await compare_index(config, index)


def unreadable(error: VectorIndexError) -> str:
    return (
        f"{error}; the bot rebuilds it from the database (at start-up and while running), "
        "or run `mnemo reconcile`"
    )


async def compare_index(config: Config, lance: LanceFactIndex | None) -> CheckResult:
    """What reconcile would repair, found without repairing it (``lance`` None: the vectors
    are pgvector rows in the PostgreSQL database itself)."""
    embedder = build_embedder(config.embedding)
    store = Store.open_read_only(config.storage.database)
    index: Reconcilable = PgVectorIndex(store.database) if lance is None else lance
    try:
        if lance is not None:
            if await lance.dimension() != await embedding_dimension(embedder):
                return CheckResult.failed(
                    "vector index",
                    "built with another embedding model's dimension: run `mnemo reconcile` "
                    "(the bot also rebuilds it at start-up)",
                )
            await lance.verify()
        report = await reconcile(store, index, embedder, dry_run=True)
    except VectorIndexError as error:
        return CheckResult.failed("vector index", unreadable(error))
    except MemoryLayerError as error:
        return CheckResult.failed("vector index", str(error))
    finally:
        await store.aclose()
        await index.aclose()
        await embedder.aclose()
    if report.in_step:
        return CheckResult.passed("vector index", "in step with the database")
    return CheckResult.failed(
        "vector index",
        f"{report.missing} missing, {report.stale} stale, {report.reembedded} to re-embed: "
        "run `mnemo reconcile` (the bot also repairs it at start-up)",
    )


def _mebibytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


def _database_files(path: Path) -> list[Path]:
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def _files_bytes(paths: list[Path]) -> int:
    return sum(path.stat().st_size for path in paths if path.is_file())


async def _database_space(path: Path) -> DatabaseSpace | None:
    if not await asyncio.to_thread(path.is_file):
        return None
    store = Store.open_read_only(path)
    try:
        return await database_space(store.database)
    finally:
        await store.aclose()


async def check_storage_space(config: Config) -> CheckResult:
    """What the data folder takes on disk, what of it the data needs, and what `mnemo
    compact` (or the scheduled storage job) would give back. Reads only."""
    storage = config.storage
    if readable_problem(storage.data_dir) is not None:
        return CheckResult.skipped(SPACE, NEEDS_FOLDER)
    if not await asyncio.to_thread(storage.data_dir.is_dir):
        return CheckResult.skipped(SPACE, f"{storage.data_dir} is not created yet")
    try:
        total = await asyncio.to_thread(folder_bytes, storage.data_dir)
        database = await _database_space(storage.database_path)
        index = await read_space(storage.index_path)
        index_folder = await asyncio.to_thread(folder_bytes, storage.index_path)
        database_files = await asyncio.to_thread(
            _files_bytes, _database_files(storage.database_path)
        )
    except (MemoryLayerError, OSError) as error:
        return CheckResult.failed(SPACE, f"{storage.data_dir}: {error}")
    parts = [f"{_mebibytes(total)} in {storage.data_dir}"]
    reclaimable = 0
    if database is not None:
        reclaimable += database.reclaimable_bytes
        parts.append(
            f"database {_mebibytes(database_files)} (live {_mebibytes(database.live_bytes)}, "
            f"{_mebibytes(database.reclaimable_bytes)} reclaimable)"
        )
    if index is not None:
        reclaimable += index.reclaimable_bytes
        parts.append(
            f"index {_mebibytes(index.folder_bytes)} (live {_mebibytes(index.live_bytes)}, "
            f"{_mebibytes(index.reclaimable_bytes)} reclaimable, {index.versions} versions)"
        )
    parts.append(f"other files {_mebibytes(total - database_files - index_folder)}")
    detail = ", ".join(parts)
    if database is not None and not database.incremental_vacuum:
        return CheckResult.warned(
            SPACE,
            f"{detail}; the database does not give deleted rows' space back: run "
            "`mnemo compact` once, with the bot stopped",
        )
    if reclaimable > max(RECLAIMABLE_WARNING_BYTES, total // 3):
        return CheckResult.warned(
            SPACE, f"{detail}; run `mnemo compact` to give the reclaimable space back"
        )
    return CheckResult.passed(SPACE, detail)
