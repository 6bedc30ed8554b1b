"""Shared setup for consolidation tests: facts in real SQLite + LanceDB, and a judge double.

``GoodJudge`` is a test double for the LLM's judgement: it reads the pairs from the prompt
exactly as a real model would see them and answers what a good model answers for the pairs
it was told about ("different" for any other pair, as the prompt asks when unsure).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from memory.consolidation import ConsolidationSettings
from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.indexing import index_facts
from memory.llm.base import ChatMessage
from memory.records import Fact, FactSource, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction

ALICE_DM = Scope("matrix:@alice:example.org", "matrix:dm")
ALICE_ROOM = Scope("matrix:@alice:example.org", "matrix:!garden:example.org")
BOB_DM = Scope("matrix:@bob:example.org", "matrix:dm")

SETTINGS = ConsolidationSettings(candidate_threshold=0.5)

_PAIR = re.compile(r"Pair (\d+)\nA \([^)]*\): (.*)\nB \([^)]*\): (.*)")


def day(number: int) -> datetime:
    return datetime(2026, 1, number, 12, tzinfo=UTC)


async def add_facts(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    scope: Scope,
    texts: Sequence[str],
    *,
    first_day: int = 1,
) -> list[Fact]:
    """Store and index ``texts`` in ``scope``, one day apart, in order (oldest first)."""

    def add(transaction: StoreTransaction) -> list[Fact]:
        return [
            transaction.facts.add(
                scope,
                NewFact(text, source=FactSource.STATED, valid_from=day(first_day + offset)),
                embedding_model=embedder.model_name,
            )
            for offset, text in enumerate(texts)
        ]

    facts = await store.write(add)
    await index_facts(index, embedder, facts)
    return facts


def shown_pairs(messages: Sequence[ChatMessage]) -> list[tuple[int, str, str]]:
    return [
        (int(number), older, newer) for number, older, newer in _PAIR.findall(messages[-1].content)
    ]


def judged(number: int, verdict: str, keep: str | None = None) -> dict[str, object]:
    """One verdict as a consistent model writes it: the two questions first, then the verdict."""
    return {
        "pair": number,
        "same_thing": verdict != "different",
        "both_true": verdict != "replaces",
        "verdict": verdict,
        "keep": keep,
    }


class GoodJudge:
    """Answers for known pairs of texts: {(text A, text B): (verdict, keep)}."""

    def __init__(self, answers: dict[tuple[str, str], tuple[str, str | None]]) -> None:
        self.answers = answers

    def __call__(self, messages: Sequence[ChatMessage]) -> str:
        verdicts = []
        for number, older, newer in shown_pairs(messages):
            verdict, keep = self.answers.get((older, newer), ("different", None))
            verdicts.append(judged(number, verdict, keep))
        return json.dumps({"verdicts": verdicts})
