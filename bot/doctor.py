"""``mnemo doctor``: one line per check, what is wrong and how to fix it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.components import build_embedder, embedding_dimension
from bot.config import Config
from memory.errors import MemoryLayerError
from memory.index import LanceFactIndex
from memory.indexing import reconcile
from memory.store import Store


@dataclass(frozen=True, slots=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


Check = Callable[[Config], Awaitable[CheckResult]]


async def check_database(config: Config) -> CheckResult:
    path = config.storage.database_path
    try:
        store = await Store.open(path)
        async with store.transaction() as transaction:
            pending = await transaction.pending.count()
        await store.aclose()
    except MemoryLayerError as error:
        return CheckResult("database", False, f"{path}: {error}")
    except OSError as error:
        return CheckResult("database", False, f"{path}: {error.strerror}; check the data_dir")
    return CheckResult("database", True, f"{path} ({pending} messages waiting for memory)")


async def check_embedding(config: Config) -> CheckResult:
    embedder = build_embedder(config.embedding)
    try:
        dimension = await embedding_dimension(embedder)
    except MemoryLayerError as error:
        return CheckResult("embedding model", False, str(error))
    finally:
        await embedder.aclose()
    return CheckResult("embedding model", True, f"{embedder.model_name} ({dimension} dimensions)")


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
        return CheckResult("vector index", False, str(error))
    finally:
        await embedder.aclose()
    if report.in_step:
        return CheckResult("vector index", True, "in step with the database")
    return CheckResult(
        "vector index",
        False,
        f"{report.missing} missing, {report.stale} stale, {report.reembedded} to re-embed: "
        "run `mnemo reconcile` (the bot also repairs it at start-up)",
    )


CHECKS: list[Check] = [check_database, check_embedding, check_index]


async def run_checks(config: Config, checks: list[Check] | None = None) -> list[CheckResult]:
    return [await check(config) for check in (checks or CHECKS)]
