"""Stages 1 and 4 in one call, when the message resembles known facts: extract the facts and
decide on the known ones together; the guards decide whether the code can use a decision
or must ask the decision prompt after all.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory.embedding.base import Embedder
from memory.index.base import VectorIndex
from memory.llm import LanguageModel
from memory.records import Fact
from memory.scope import Scope
from memory.store import Store
from memory.write.candidates import find_candidates
from memory.write.extraction import Extraction, InlineDecision, ask_for_facts, from_answer
from memory.write.grounding import statement_clauses
from memory.write.prompts import combined as prompt


async def related_facts(
    store: Store,
    index: VectorIndex,
    embedder: Embedder,
    scope: Scope,
    text: str,
    *,
    threshold: float,
    limit: int,
) -> list[Fact]:
    """The active facts of ``scope`` that the message, or one of its clauses, resembles
    (a clause may score far higher than the whole message), most similar first."""
    clauses = statement_clauses(text)
    texts = [text, *clauses] if len(clauses) > 1 else [text]
    vectors = await embedder.embed(texts, "document")
    found = await find_candidates(
        store, index, scope, vectors, model=embedder.model_name, threshold=threshold, limit=limit
    )
    best: dict[int, Fact] = {}
    for candidate in sorted((c for row in found for c in row), key=lambda c: -c.similarity):
        best.setdefault(candidate.fact.id, candidate.fact)
    return list(best.values())[:limit]


async def extract_and_decide(
    llm: LanguageModel, text: str, message_time: datetime, known: Sequence[Fact]
) -> Extraction:
    """The user's own facts in ``text``, each with the model's decision about ``known``;
    raises UnusableModelOutput on a broken or cut answer."""
    messages = prompt.build_messages(text, [fact.text for fact in known])
    response = await ask_for_facts(
        llm, messages, prompt.json_schema(), prompt.CombinedResponse, text
    )
    shown = frozenset(fact.id for fact in known)

    def decision(fact: prompt.CombinedFact) -> InlineDecision | None:
        if fact.action is None:
            return None
        listed = fact.target is not None and 1 <= fact.target <= len(known)
        target = known[fact.target - 1] if listed and fact.target is not None else None
        return InlineDecision(fact.action, fact.target, target, shown)

    return await from_answer(response.facts, text, message_time, decision)
