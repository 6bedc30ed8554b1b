"""Doctor checks of the local parts: database, embedding model, vector index."""

from __future__ import annotations

from bot.components import build_embedder, embedding_dimension
from bot.config import Config
from bot.doctor.base import CheckResult
from memory.errors import MemoryLayerError
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.store import Store


async def check_database(config: Config) -> CheckResult:
    path = config.storage.database_path
    try:
        store = await Store.open(path)
        async with store.transaction() as transaction:
            pending = await transaction.pending.count()
        await store.aclose()
    except MemoryLayerError as error:
        return CheckResult.failed("database", f"{path}: {error}")
    except OSError as error:
        return CheckResult.failed("database", f"{path}: {error.strerror}; check the data_dir")
    return CheckResult.passed("database", f"{path} ({pending} messages waiting for memory)")


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
        store = await Store.open(config.storage.database_path)
        index = await LanceFactIndex.open(config.storage.index_path, dimension=dimension)
        report = await reconcile(store, index, embedder, dry_run=True)
        await index.aclose()
        await store.aclose()
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
