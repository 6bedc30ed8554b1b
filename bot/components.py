"""The composition root of the memory layer: builds the real parts from the config."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from bot.config import Config, EmbeddingSettings, LLMSettings, MemorySettings
from memory.embedding import Embedder, FastEmbedEmbedder, OllamaEmbedder
from memory.index import LanceFactIndex
from memory.indexing import ReconcileReport, reconcile
from memory.llm import LanguageModel
from memory.llm.ollama_backend import OllamaLanguageModel
from memory.llm.openai_backend import OpenAILanguageModel
from memory.recall import FastEmbedReranker, RecallSettings, Reranker
from memory.store import Store

log = logging.getLogger(__name__)


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    if settings.backend == "ollama":
        return OllamaEmbedder(settings.model, host=settings.ollama_url)
    return FastEmbedEmbedder(
        settings.model,
        model_path=settings.model_path,
        cache_dir=settings.cache_dir,
        dimension=settings.dimension,
        pooling=settings.pooling,
    )


def build_language_model(settings: LLMSettings) -> LanguageModel:
    if settings.provider == "openai":
        return OpenAILanguageModel(
            settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_seconds,
        )
    return OllamaLanguageModel(
        settings.model, host=settings.base_url, timeout=settings.timeout_seconds
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
    ~40 s of retries offline) and is answered in cosine order meanwhile.
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
    index: LanceFactIndex
    embedder: Embedder

    async def aclose(self) -> None:
        await self.index.aclose()
        await self.embedder.aclose()
        await self.store.aclose()


async def open_memory(
    config: Config, *, embedder: Embedder | None = None, run_reconcile: bool = True
) -> MemoryComponents:
    """Open the store and index, and bring the index in step with SQLite."""
    embedder = embedder or build_embedder(config.embedding)
    dimension = await embedding_dimension(embedder)
    store = await Store.open(config.storage.database_path)
    index = await LanceFactIndex.open(config.storage.index_path, dimension=dimension)
    components = MemoryComponents(store, index, embedder)
    if run_reconcile:
        report: ReconcileReport = await reconcile(store, index, embedder)
        if not report.in_step:
            log.warning(
                "index repaired at start-up: %d missing, %d stale, %d re-embedded",
                report.missing,
                report.stale,
                report.reembedded,
            )
    return components
