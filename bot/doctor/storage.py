"""Doctor checks of the local parts: database, embedding model, vector index."""

from __future__ import annotations

from bot.components import build_embedder, embedding_dimension
from bot.config import Config
from bot.doctor.base import CheckResult
from memory.errors import MemoryLayerError, VectorIndexError
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.store import Store, sqlite_url
from memory.store.migrations import SchemaState, inspect_schema


async def check_database(config: Config) -> CheckResult:
    """The schema revision and whether it is current; the doctor never upgrades it."""
    path = config.storage.database_path
    try:
        state = await inspect_schema(sqlite_url(path))
        if state.is_empty:
            detail = f"{path}: none yet; the bot makes it at start-up (revision {state.head})"
            return CheckResult.passed("database", detail)
        if not state.is_current:
            return schema_not_current("database", str(path), state)
        store = await Store.open(path, migrate=False)
        async with store.transaction() as transaction:
            pending = await transaction.pending.count()
        await store.aclose()
    except MemoryLayerError as error:
        return CheckResult.failed("database", f"{path}: {error}")
    except OSError as error:
        return CheckResult.failed("database", f"{path}: {error.strerror}; check the data_dir")
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


async def check_index(config: Config) -> CheckResult:
    embedder = build_embedder(config.embedding)
    try:
        dimension = await embedding_dimension(embedder)
        state = await inspect_schema(sqlite_url(config.storage.database_path))
        if state.is_empty:
            return CheckResult.passed("vector index", "none yet; the bot makes it at start-up")
        if not state.is_current:
            return CheckResult.skipped("vector index", "checked once the database is current")
        store = await Store.open(config.storage.database_path, migrate=False)
        index = await LanceFactIndex.open(config.storage.index_path, dimension=dimension)
        await index.verify()
        report = await reconcile(store, index, embedder, dry_run=True)
        await index.aclose()
        await store.aclose()
    except VectorIndexError as error:
        return CheckResult.failed(
            "vector index",
            f"{error}; the bot rebuilds it from the database (at start-up and while "
            "running), or run `mnemo reconcile`",
        )
    except MemoryLayerError as error:
        return CheckResult.failed("vector index", str(error))
    finally:
        await embedder.aclose()
    if report.in_step:
        return CheckResult.passed("vector index", "in step with the database")
    return CheckResult.failed(
        "vector index",
        f"{report.missing} missing, {report.stale} stale, {report.reembedded} to re-embed: "
        "run `mnemo reconcile` (the bot also repairs it at start-up)",
    )
