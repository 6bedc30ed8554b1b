"""The composition root: builds every part from the config and hands them down.

Adapters (console, Matrix, Discord) run on an :class:`Application`: they call
``application.core.handle(message)``. Parts can be injected (tests pass a scripted LLM, the
real embedder they already loaded, a web-search double); the rest is built from the config.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta

from bot.components import build_language_model, build_reranker, open_memory, recall_settings
from bot.config import Config
from bot.core import ConversationCore, CoreSettings
from bot.scheduler import MaintenanceScheduler, build_maintenance_scheduler
from bot.websearch import SearxngAdvisor, SearxngClient, WebSearchAdvisor
from memory.embedding import Embedder, EmbeddingBatcher
from memory.indexing import Reconcilable
from memory.llm import LanguageModel
from memory.priority import BackgroundModel, Replies
from memory.recall import Recaller, Reranker
from memory.store import Store
from memory.write.pipeline import PipelineSettings
from memory.write.writer import MemoryWriter, WriteSettings

log = logging.getLogger(__name__)


@dataclass
class Application:
    config: Config
    core: ConversationCore
    writer: MemoryWriter
    recaller: Recaller
    store: Store
    index: Reconcilable
    embedder: Embedder
    llm: LanguageModel
    scheduler: MaintenanceScheduler
    # Shares the embedder among concurrent callers, recall first (``embedder`` is its model).
    batcher: EmbeddingBatcher
    web_search: WebSearchAdvisor | None = None
    reranker: Reranker | None = None
    # Parts the caller passed in: the caller owns them and closes them.
    borrowed: tuple[object, ...] = ()
    # Whether this process's queue worker applies queued writes (else other processes do).
    applies_writes: bool = True

    async def start(self) -> None:
        """Start the queue worker and the maintenance jobs in the background; returns at
        once. Writes left queued by an earlier run (crash, LLM outage) are picked up by the
        worker while the adapters already answer."""
        self.writer.start()
        await self.scheduler.start()

    async def aclose(self) -> None:
        """Stop the jobs and the queue worker first (they need the store; a write cut off
        stays queued), then close the parts: the store before the index, as closing it
        writes the index rows of transactions whose callers were cancelled."""
        await self.scheduler.shutdown()
        await self.writer.aclose()
        await self.batcher.aclose()
        for part in (self.web_search, self.reranker, self.llm, self.embedder):
            if part is not None and not any(part is mine for mine in self.borrowed):
                await part.aclose()
        await self.store.aclose()
        await self.index.aclose()


def core_settings(config: Config) -> CoreSettings:
    return CoreSettings(
        bot_name=config.chat.bot_name,
        command_prefix=config.chat.command_prefix,
        scope_mode=config.memory.scope_mode,
        max_message_chars=config.chat.max_message_chars,
        rate_limit_per_minute=config.chat.rate_limit_per_minute,
        history_turns=config.chat.history_turns,
        temperature=config.llm.temperature,
        edit_window=timedelta(hours=config.chat.edit_window_hours),
    )


def write_settings(config: Config, *, apply_queued: bool | None = None) -> WriteSettings:
    """``apply_queued`` None: as the config says for the bot (``mnemo worker`` passes True)."""
    return WriteSettings(
        pipeline=PipelineSettings(
            candidate_threshold=config.memory.candidate_threshold,
            candidate_limit=config.memory.candidate_limit,
            max_destructive_actions=config.memory.max_destructive_actions,
            decide_in_extraction=config.memory.decide_in_extraction,
        ),
        scope_mode=config.memory.scope_mode,
        claim_lease_seconds=config.storage.claim_lease_seconds,
        apply_queued=(config.storage.bot_applies_writes if apply_queued is None else apply_queued),
    )


def build_web_search(config: Config, llm: LanguageModel) -> WebSearchAdvisor | None:
    settings = config.search
    if not settings.searxng_url:
        return None
    client = SearxngClient(
        settings.searxng_url,
        timeout_seconds=settings.timeout_seconds,
        language=settings.language,
        safe_search=settings.safe_search,
    )
    return SearxngAdvisor(llm, client, max_results=settings.max_results)


async def build_application(
    config: Config,
    *,
    llm: LanguageModel | None = None,
    embedder: Embedder | None = None,
    web_search: WebSearchAdvisor | None = None,
    reranker: Reranker | None = None,
    apply_queued: bool | None = None,
) -> Application:
    """Every part from the config; ``apply_queued`` True makes a process that applies queued
    writes whatever ``storage.bot_applies_writes`` says (``mnemo worker``)."""
    borrowed_parts = (llm, embedder, web_search, reranker)
    built_llm = llm is None
    llm = llm or build_language_model(config.llm)
    try:
        memory = await open_memory(config, embedder=embedder)
    except BaseException:
        # The model or database failed to open: close the HTTP client built for the LLM.
        if built_llm:
            await llm.aclose()
        raise
    web_search = web_search or build_web_search(config, llm)
    # Loaded lazily on the first lookup; if it cannot load, recall falls back to cosine order.
    reranker = reranker or build_reranker(config.memory, config.embedding)
    # Recall's texts go before the write queue's and consolidation's (replies first).
    batcher = EmbeddingBatcher(memory.embedder, max_calls=config.embedding.parallel_calls)
    # Replies first: the write queue waits for the replies in progress, the background's
    # model calls give way to them, and the write queue's and consolidation's share one
    # limit of calls at the server.
    replies = Replies()
    background_llm = BackgroundModel(llm, replies, max_calls=config.llm.background_calls)
    settings = write_settings(config, apply_queued=apply_queued)
    writer = MemoryWriter(
        memory.store,
        memory.index,
        batcher.background,
        llm,
        settings,
        background_llm=background_llm,
        replies=replies,
    )
    recaller = Recaller(
        memory.store,
        memory.index,
        batcher.replies,
        recall_settings(config.memory),
        reranker=reranker,
    )
    core = ConversationCore(
        core_settings(config),
        store=memory.store,
        writer=writer,
        recaller=recaller,
        llm=llm,
        web_search=web_search,
        replies=replies,
    )
    scheduler = build_maintenance_scheduler(
        config,
        memory.store,
        memory.index,
        batcher.background,
        background_llm,
        # The queue retry wakes this process's worker: none when workers apply the writes.
        writer if settings.apply_queued else None,
    )
    return Application(
        config=config,
        scheduler=scheduler,
        batcher=batcher,
        core=core,
        writer=writer,
        recaller=recaller,
        store=memory.store,
        index=memory.index,
        embedder=memory.embedder,
        llm=llm,
        web_search=web_search,
        reranker=reranker,
        borrowed=tuple(part for part in borrowed_parts if part is not None),
        applies_writes=settings.apply_queued,
    )
