"""Replies are not kept waiting by a consolidation run on a large scope.

The whole application (real SQLite, LanceDB, all-MiniLM-L6-v2, writer, recaller, core) with
one scripted model as the double for the LLM's judgement: it replies to chat, extracts
nothing from small talk, and judges every consolidation pair "different".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bot.app import build_application
from bot.messages import IncomingMessage
from bot.scheduler import consolidation_settings
from memory.consolidation import ConsolidationReport, consolidate
from memory.consolidation.judge_prompt import SYSTEM_PROMPT as JUDGE_PROMPT
from memory.embedding.base import Embedder
from memory.index.base import IndexedFact, ScoredFactId
from memory.indexing import Reconcilable, index_facts
from memory.llm import ChatMessage, ScriptedLanguageModel
from memory.recall import FastEmbedReranker
from memory.records import NewFact
from memory.scope import Scope
from tests.bot.core.harness import START, ScriptedMind, make_config
from tests.memory.consolidation.helpers import judged, shown_pairs

LARGE_SCOPE = 600
ALICE = Scope("matrix:@alice:example.org", "matrix:dm")


class Mind:
    """Chat and extraction as the core harness answers them; every judged pair "different"."""

    def __init__(self) -> None:
        self.chat = ScriptedMind(replies=["Hello Alice, good to see you."])

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        if messages[0].content == JUDGE_PROMPT:
            pairs = shown_pairs(messages)
            return json.dumps({"verdicts": [judged(n, "different") for n, _, _ in pairs]})
        return self.chat(messages)


class SearchSpy:
    """Passes everything to the real index and counts consolidation's searches."""

    def __init__(self, index: Reconcilable) -> None:
        self.index = index
        self.searches = 0
        self.first_search = asyncio.Event()

    async def upsert(self, facts: Sequence[IndexedFact]) -> None:
        await self.index.upsert(facts)

    async def delete(self, fact_ids: Sequence[int]) -> None:
        await self.index.delete(fact_ids)

    async def erase(self, fact_ids: Sequence[int]) -> None:
        await self.index.erase(fact_ids)

    async def search(
        self,
        scope: Scope,
        vector: npt.NDArray[np.float32],
        *,
        model: str,
        limit: int,
        min_similarity: float | None = None,
    ) -> list[ScoredFactId]:
        self.searches += 1
        self.first_search.set()
        return await self.index.search(
            scope, vector, model=model, limit=limit, min_similarity=min_similarity
        )

    async def indexed_models(self) -> dict[int, str]:
        return await self.index.indexed_models()

    async def optimize(self) -> None:
        await self.index.optimize()

    async def aclose(self) -> None:
        return None


async def test_a_reply_is_answered_while_consolidation_runs_on_a_large_scope(
    tmp_path: Path, embedder: Embedder
) -> None:
    config = make_config(tmp_path / "data")
    model = ScriptedLanguageModel(fallback=Mind())
    reranker = FastEmbedReranker(cache_dir=tmp_path / "no-models", local_files_only=True)
    app = await build_application(config, llm=model, embedder=embedder, reranker=reranker)
    try:
        facts = await app.store.write(
            lambda transaction: [
                transaction.facts.add(
                    ALICE, NewFact(f"I visited city number {n} in the year {1900 + n % 120}")
                )
                for n in range(LARGE_SCOPE)
            ]
        )
        await index_facts(app.index, embedder, facts)
        spy = SearchSpy(app.index)
        run = asyncio.create_task(
            consolidate(app.store, spy, app.embedder, model, consolidation_settings(config))
        )
        await spy.first_search.wait()

        replies = await app.core.handle(
            IncomingMessage(
                platform="matrix",
                user_key=ALICE.owner,
                display_name="Alice",
                room_key="matrix:dm",
                text="Hello there!",
                time=START,
                is_direct=True,
            )
        )
        searches_when_answered, still_running = spy.searches, not run.done()
        report: ConsolidationReport = await run
    finally:
        await app.aclose()

    assert [reply.text for reply in replies] == ["Hello Alice, good to see you."]
    # The reply came back in the middle of the run, between two of its index searches.
    assert still_running
    assert 0 < searches_when_answered < LARGE_SCOPE
    assert report.changed_facts == LARGE_SCOPE
    assert report.pairs_proposed > 0 and report.merges == []
