"""hit@k, recall@k and MRR computed by hand."""

from __future__ import annotations

import pytest

from evaluation import QuestionOutcome, score, score_by_category


def test_outcome_from_ranking() -> None:
    outcome = QuestionOutcome.from_ranking(4, [9, 3, 7, 5, 1], frozenset({5, 3, 42}))
    assert outcome.relevant_ranks == (2, 4)
    assert not outcome.hit(1) and outcome.hit(5)
    assert outcome.recall(1) == 0 and outcome.recall(5) == pytest.approx(2 / 3)
    assert outcome.reciprocal_rank() == pytest.approx(0.5)


def test_nothing_found_scores_zero() -> None:
    outcome = QuestionOutcome.from_ranking(1, [1, 2], frozenset({3}))
    assert not outcome.hit(50) and outcome.recall(50) == 0 and outcome.reciprocal_rank() == 0


def test_means_overall_and_per_category() -> None:
    outcomes = [
        QuestionOutcome.from_ranking(1, [1, 2, 3], frozenset({1})),
        QuestionOutcome.from_ranking(1, [1, 2, 3], frozenset({3})),
        QuestionOutcome.from_ranking(2, [1, 2, 3], frozenset({9})),
    ]
    overall = score(outcomes, cutoffs=(1, 5))
    assert overall.questions == 3
    assert overall.hit == {1: pytest.approx(1 / 3), 5: pytest.approx(2 / 3)}
    assert overall.mrr == pytest.approx((1 + 1 / 3 + 0) / 3)
    by_category = score_by_category(outcomes)
    assert by_category[1].questions == 2 and by_category[1].hit[1] == pytest.approx(0.5)
    assert by_category[2].mrr == 0
    assert score([]).questions == 0
