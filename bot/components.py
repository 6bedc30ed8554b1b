"""The composition root of the memory layer: builds the real parts from the config."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.config import Config, EmbeddingSettings, LLMSettings, MemorySettings
from memory.embedding import Embedder, FastEmbedEmbedder, OllamaEmbedder
from memory.errors import LockTimeoutError, VectorIndexError
from memory.index import HealingIndex
from memory.indexing import Reconcilable, reconcile
from memory.llm import LanguageModel
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from memory.recall import FastEmbedReranker, RecallSettings, Reranker
from memory.store import Store
from memory.store.space import switch_to_incremental_vacuum
from memory.store.vectors import PgVectorIndex

log = logging.getLogger(__name__)


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    if settings.backend == "ollama":
        return OllamaEmbedder(settings.model, host=settings.ollama_url, prompts=settings.prompts())
    return FastEmbedEmbedder(
        settings.model,
        model_path=settings.model_path,
        cache_dir=settings.cache_dir,
        dimension=settings.dimension,
        pooling=settings.pooling,
        threads=settings.threads or None,
        prompts=settings.prompts(),
    )


def build_language_model(settings: LLMSettings) -> LanguageModel:
    if settings.provider == "openai":
        return OpenAILanguageModel(
            settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_seconds,
            budgets=settings.budgets(),
            seed=settings.seed,
        )
    return OllamaLanguageModel(
        settings.model,
        host=settings.base_url,
        timeout=settings.timeout_seconds,
        budgets=settings.budgets(),
        seed=settings.seed,
    )


def recall_settings(settings: MemorySettings) -> RecallSettings:
    return RecallSettings(
        top_k=settings.recall_top_k,
        lookup_pool=settings.lookup_pool,
        lookup_min_similarity=settings.lookup_min_similarity,
        hybrid=settings.hybrid_retrieval,
    )


def build_reranker(
    memory: MemorySettings, embedding: EmbeddingSettings, *, load_wait: float | None = 10.0
) -> Reranker | None:
    """The configured cross-encoder (loaded lazily on first lookup), or None if turned off.

    A reply waits at most ``load_wait`` seconds for the first load (a download, or fastembed's
    long retries of it offline) and is answered in cosine order meanwhile.
    """
    if not memory.reranker_model:
        return None
    return FastEmbedReranker(
        memory.reranker_model,
        model_path=memory.reranker_model_path,
        cache_dir=embedding.cache_dir,
        load_wait=load_wait,
    )


async def embedding_dimension(embedder: Embedder) -> int:
    """Ask the model itself (also loads it, so a broken model fails at start-up)."""
    return int((await embedder.embed(["dimension probe"])).shape[1])


@dataclass
class MemoryComponents:
    store: Store
    index: Reconcilable
    embedder: Embedder
    # SQLite's LanceDB index repairs itself (the same object as ``index``); PostgreSQL's
    # vectors are written in the facts' own transactions and need no healing (None).
    healing: HealingIndex | None = None

    async def aclose(self) -> None:
        await self.index.aclose()
        await self.embedder.aclose()
        await self.store.aclose()


async def open_memory(
    config: Config,
    *,
    embedder: Embedder | None = None,
    run_reconcile: bool = True,
    repair: bool = True,
) -> MemoryComponents:
    """Open the store (its schema upgraded first) and index, and bring them in step.

    On SQLite, a broken LanceDB index is replaced at once and refilled in the background, as
    is an empty one: the bot answers meanwhile, without memories. ``mnemo reconcile`` passes
    ``run_reconcile=False`` and repairs in the foreground; ``repair=False`` (a dry run)
    changes no file and raises if the index cannot be opened.
    """
    owned_embedder = embedder is None
    embedder = embedder or build_embedder(config.embedding)
    dimension = await embedding_dimension(embedder)
    store = await Store.open(config.storage.database)
    if repair and store.database.dialect == "sqlite":
        await _prepare_database_space(store)
    try:
        if store.database.dialect == "postgresql":
            return await _open_postgres(
                store,
                embedder,
                dimension,
                run_reconcile,
                reconcile_every_minutes=config.scheduler.reconcile_interval_minutes,
            )
        index = await HealingIndex.open(
            config.storage.index_path,
            dimension=dimension,
            refill=lambda rebuilt: reconcile(store, rebuilt, embedder),
            full_text_index=config.memory.hybrid_retrieval,
            replace_broken=repair,
        )
    except BaseException:
        await store.aclose()
        if owned_embedder:
            await embedder.aclose()
        raise
    components = MemoryComponents(store, index, embedder, healing=index)
    if run_reconcile:
        await _bring_in_step(components, index)
    return components


async def _open_postgres(
    store: Store,
    embedder: Embedder,
    dimension: int,
    run_reconcile: bool,
    *,
    reconcile_every_minutes: int,
) -> MemoryComponents:
    index = await PgVectorIndex.open(store.database, dimension=dimension)
    if run_reconcile:
        await _reconcile_at_start(store, index, embedder, reconcile_every_minutes)
    return MemoryComponents(store, index, embedder)


async def _reconcile_at_start(
    store: Store, index: PgVectorIndex, embedder: Embedder, reconcile_every_minutes: int
) -> None:
    """Nothing to do unless the embedding model changed: vectors commit with their facts.
    A person's lock that another process held too long stops this reconcile, not the start:
    what it wrote stays, and a later reconcile does the rest."""
    try:
        report = await reconcile(store, index, embedder)
    except LockTimeoutError as error:
        log.warning(
            "start-up reconcile stopped (%s); starting anyway. The facts it did not reach "
            "keep the vectors they had (none, or the previous model's) until the scheduled "
            "reconcile (every %d minutes, scheduler.reconcile_interval_minutes) or the next "
            "start repairs them; `mnemo reconcile` repairs them now",
            error,
            reconcile_every_minutes,
        )
        return
    if not report.in_step:
        log.warning(
            "vectors brought in step at start-up: %d missing, %d stale, %d re-embedded",
            report.missing,
            report.stale,
            report.reembedded,
        )


async def _bring_in_step(memory: MemoryComponents, index: HealingIndex) -> None:
    if index.needs_refill:
        await _fill_in_background(memory, index)
        return
    if await index.heal_if_broken():
        return
    try:
        # The files were just read whole: reconcile the Lance index without reading again.
        report = await reconcile(memory.store, index.current, memory.embedder)
    except VectorIndexError:
        if await index.heal_if_broken():
            return
        raise
    if not report.in_step:
        log.warning(
            "index repaired at start-up: %d missing, %d stale, %d re-embedded",
            report.missing,
            report.stale,
            report.reembedded,
        )


async def _fill_in_background(memory: MemoryComponents, index: HealingIndex) -> None:
    """An empty index (new, missing, replaced, or of another dimension) is filled from the
    database in the background; a new bot with no facts has nothing to fill."""
    planned = await reconcile(memory.store, index.current, memory.embedder, dry_run=True)
    if planned.in_step:
        return
    if not index.replacements:
        log.warning(
            "the vector index at %s is missing or empty: rebuilding it from the database "
            "(%d facts) in the background; replies go on without memories meanwhile",
            index.path,
            planned.missing,
        )
    index.start_rebuild()


async def _prepare_database_space(store: Store) -> None:
    """Switch a database made without incremental auto-vacuum (all before this version)
    while it is small; a larger one waits for ``mnemo compact``, which may take a while."""
    switched = await switch_to_incremental_vacuum(store.database)
    if switched:
        log.info("database switched to incremental auto-vacuum (one VACUUM)")
    elif switched is False:
        log.warning(
            "the database %s was made without incremental auto-vacuum: the space of deleted "
            "rows is reused but not given back to the disk; run `mnemo compact` once (it "
            "copies the whole database, with the bot stopped)",
            store.database.path,
        )
