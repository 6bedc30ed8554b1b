"""Retrieval metrics: hit@k, recall@k and MRR, overall and per question category."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

CUTOFFS = (1, 5, 10, 50)


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    """Where one question's relevant items landed in a ranking (cut at the deepest cutoff)."""

    category: int
    relevant_ranks: tuple[int, ...]
    """1-based ranks of the relevant items found, ascending."""
    relevant_count: int

    @classmethod
    def from_ranking(
        cls, category: int, ranking: Sequence[int], relevant: frozenset[int]
    ) -> QuestionOutcome:
        ranks = tuple(rank for rank, item in enumerate(ranking, start=1) if item in relevant)
        return cls(category, ranks, len(relevant))

    def hit(self, k: int) -> bool:
        return bool(self.relevant_ranks) and self.relevant_ranks[0] <= k

    def recall(self, k: int) -> float:
        return sum(1 for rank in self.relevant_ranks if rank <= k) / self.relevant_count

    def reciprocal_rank(self) -> float:
        return 1.0 / self.relevant_ranks[0] if self.relevant_ranks else 0.0


@dataclass(frozen=True, slots=True)
class Scores:
    questions: int
    hit: Mapping[int, float]
    recall: Mapping[int, float]
    mrr: float

    def as_dict(self) -> dict[str, object]:
        return {
            "questions": self.questions,
            **{f"hit@{k}": round(value, 4) for k, value in self.hit.items()},
            **{f"recall@{k}": round(value, 4) for k, value in self.recall.items()},
            "mrr": round(self.mrr, 4),
        }


def score(outcomes: Sequence[QuestionOutcome], cutoffs: Iterable[int] = CUTOFFS) -> Scores:
    """Means over questions. MRR counts a question with nothing relevant in the ranking as 0."""
    count = len(outcomes)
    if count == 0:
        return Scores(0, {}, {}, 0.0)
    ks = tuple(cutoffs)
    return Scores(
        questions=count,
        hit={k: sum(outcome.hit(k) for outcome in outcomes) / count for k in ks},
        recall={k: sum(outcome.recall(k) for outcome in outcomes) / count for k in ks},
        mrr=sum(outcome.reciprocal_rank() for outcome in outcomes) / count,
    )


def score_by_category(outcomes: Sequence[QuestionOutcome]) -> dict[int, Scores]:
    categories = sorted({outcome.category for outcome in outcomes})
    return {
        category: score([outcome for outcome in outcomes if outcome.category == category])
        for category in categories
    }
