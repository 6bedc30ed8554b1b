"""The retrieval evaluation: LoCoMo conversations through the real read path.

Each conversation is its own store; every observation is written for its speaker and for a
joint user ("without speaker scope"), and each question ranked to depth 50 in each mode.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from evaluation.locomo import Conversation, Question
from evaluation.metrics import CUTOFFS, QuestionOutcome
from memory.embedding.base import Embedder, Vectors
from memory.embedding.batching import EmbeddingBatcher
from memory.index.lance import LanceFactIndex
from memory.indexing import index_facts
from memory.recall.errors import RerankerError
from memory.recall.recaller import Recaller
from memory.recall.reranker import Reranker
from memory.recall.results import RecallSettings
from memory.records import Fact, FactSource, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction

log = logging.getLogger(__name__)

PLATFORM = "locomo"
DEPTH = max(CUTOFFS)
PRIME_BATCH = 256


@dataclass(frozen=True, slots=True)
class EvalMode:
    name: str
    lookup: bool
    """Explicit lookup (pool, cutoff, reranker) instead of passive recall."""
    hybrid: bool
    speaker_scope: bool
    """Ask as the speaker the question is about, seeing only that speaker's facts."""

    @property
    def path(self) -> str:
        return "explicit" if self.lookup else "hybrid" if self.hybrid else "passive"

    @property
    def scope(self) -> str:
        return "speaker" if self.speaker_scope else "joint"


ALL_MODES: tuple[EvalMode, ...] = tuple(
    EvalMode(f"{path}{' / speaker scope' if scoped else ''}", lookup, hybrid, scoped)
    for scoped in (False, True)
    for path, lookup, hybrid in (
        ("passive (dense)", False, False),
        ("explicit (lookup)", True, False),
        ("hybrid (dense + full-text)", False, True),
    )
)


@dataclass
class EvalRun:
    """Outcomes per mode name, and what the reader must know about how they were made."""

    outcomes: dict[str, list[QuestionOutcome]] = field(default_factory=dict)
    reranked: bool = False
    notes: list[str] = field(default_factory=list)


def _scope(conversation: Conversation, speaker: str | None) -> Scope:
    """A speaker's own scope, or (``None``) the joint user's, who holds both speakers' facts."""
    room = f"{PLATFORM}:{conversation.sample_id}"
    return Scope(f"{room}/{'both-speakers' if speaker is None else speaker}", room)


async def probe_reranker(reranker: Reranker | None) -> tuple[Reranker | None, str | None]:
    """Load the reranker once up front; ``(None, reason)`` if it cannot score."""
    if reranker is None:
        return None, "no reranker configured"
    try:
        await reranker.rank("probe", ["probe"])
    except RerankerError as error:
        return None, str(error)
    return reranker, None


async def run_evaluation(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    *,
    modes: Sequence[EvalMode] = ALL_MODES,
    reranker: Reranker | None = None,
    lookup_min_similarity: float = RecallSettings.lookup_min_similarity,
    work_directory: Path | None = None,
    on_question: Callable[[], None] = lambda: None,
) -> EvalRun:
    """Score every mode on every question; ``on_question`` ticks once per question and mode."""
    run = EvalRun()
    if any(mode.lookup for mode in modes):
        reranker, reason = await probe_reranker(reranker)
        run.reranked = reranker is not None
        if reason is not None:
            run.notes.append(f"explicit lookup used cosine order (reranker unavailable: {reason})")
    questions = [question.text for c in conversations for question in c.questions]
    # A cache that holds every text: each mode finds its questions' vectors there, embedded
    # up front in large calls (several times faster than one by one).
    texts = len(questions) + sum(len(c.observations) for c in conversations)
    cached = EmbeddingBatcher(embedder, cache_size=texts)
    try:
        for start in range(0, len(questions), PRIME_BATCH):
            await cached.replies.embed(questions[start : start + PRIME_BATCH], "query")
        with tempfile.TemporaryDirectory(dir=work_directory, prefix="mnemo-eval-") as directory:
            for number, conversation in enumerate(conversations):
                location = Path(directory) / f"conversation-{number}"
                per_mode = await _evaluate_conversation(
                    conversation,
                    cached.replies,
                    modes,
                    reranker,
                    lookup_min_similarity,
                    location,
                    on_question,
                )
                for name, outcomes in per_mode.items():
                    run.outcomes.setdefault(name, []).extend(outcomes)
    finally:
        await cached.aclose()
    return run


async def _evaluate_conversation(
    conversation: Conversation,
    embedder: Embedder,
    modes: Sequence[EvalMode],
    reranker: Reranker | None,
    lookup_min_similarity: float,
    location: Path,
    on_question: Callable[[], None],
) -> dict[str, list[QuestionOutcome]]:
    store = await Store.open(location / "facts.sqlite3")
    texts = [observation.text for observation in conversation.observations]
    vectors = await embedder.embed(texts, "document")
    index = await LanceFactIndex.open(
        location / "index",
        dimension=int(vectors.shape[1]),
        full_text_index=any(mode.hybrid for mode in modes),
    )
    try:
        observation_of = await _build_store(conversation, store, index, embedder, vectors)
        results: dict[str, list[QuestionOutcome]] = {}
        for mode in modes:
            settings = RecallSettings(
                top_k=DEPTH,
                lookup_pool=DEPTH,
                lookup_min_similarity=lookup_min_similarity,
                hybrid=mode.hybrid,
            )
            recaller = Recaller(store, index, embedder, settings, reranker=reranker)
            results[mode.name] = [
                await _ask(recaller, mode, conversation, question, observation_of, on_question)
                for question in conversation.questions
            ]
        return results
    finally:
        await index.aclose()
        await store.aclose()


async def _build_store(
    conversation: Conversation,
    store: Store,
    index: LanceFactIndex,
    embedder: Embedder,
    vectors: Vectors,
) -> dict[int, int]:
    """Write every observation for its speaker and for the joint user; fact id -> observation."""
    copies = await store.write(partial(_add_observations, conversation))
    for facts in copies:
        await index_facts(index, embedder, facts, vectors)
    return {fact.id: position for facts in copies for position, fact in enumerate(facts)}


def _add_observations(
    conversation: Conversation, transaction: StoreTransaction
) -> list[list[Fact]]:
    """Each observation as a fact of its speaker, then as one of the joint user."""
    joint = _scope(conversation, None)
    copies: list[list[Fact]] = [[], []]
    for observation in conversation.observations:
        new = NewFact(observation.text, category="observation", source=FactSource.STATED)
        speaker = _scope(conversation, observation.speaker)
        copies[0].append(transaction.facts.add(speaker, new))
        copies[1].append(transaction.facts.add(joint, new))
    return copies


async def _ask(
    recaller: Recaller,
    mode: EvalMode,
    conversation: Conversation,
    question: Question,
    observation_of: dict[int, int],
    on_question: Callable[[], None],
) -> QuestionOutcome:
    scope = _scope(conversation, question.speaker if mode.speaker_scope else None)
    recall = recaller.lookup if mode.lookup else recaller.passive
    recalled = await recall(scope, question.text)
    ranking = [observation_of[item.fact.id] for item in recalled]
    on_question()
    return QuestionOutcome.from_ranking(question.category, ranking, question.relevant)
