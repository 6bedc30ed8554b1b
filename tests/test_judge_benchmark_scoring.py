"""How benchmarks/judge_real_model.py scores the code's decision on a labelled pair."""

from __future__ import annotations

import pytest

from benchmarks.judge_real_model import candidate, outcome
from evaluation.calibration.pairs import LabelledPair
from memory.consolidation.decisions import MergeDecision, Verdict, decide
from memory.consolidation.judge_prompt import PairJudgement
from tests.memory.consolidation.helpers import judged


def scored(group: str, first: str, second: str, verdict: str, keep: str | None) -> str:
    pair = LabelledPair(group, "en", first, second, line=2)
    judgement = PairJudgement.model_validate(judged(1, verdict, keep))
    return outcome(pair, decide(candidate(0, pair), judgement))


@pytest.mark.parametrize(
    ("group", "verdict", "keep", "result"),
    [
        ("different", "different", None, "right"),
        ("different", "same", "A", "lost"),
        ("unrelated", "replaces", None, "lost"),
        ("same", "same", "B", "right"),
        ("same", "different", None, "missed"),
        ("update", "replaces", None, "right"),
        ("update", "same", "A", "wrong kind"),
        ("detail", "adds_detail", "B", "right"),
        # The code keeps the side with the detail, whichever the model named.
        ("detail", "adds_detail", "A", "right"),
        ("detail", "adds_detail", None, "right"),
    ],
)
def test_each_decision_is_scored_by_what_it_does(
    group: str, verdict: str, keep: str | None, result: str
) -> None:
    first, second = "I play the guitar", "I play the guitar in a jazz band on Fridays"
    assert scored(group, first, second, verdict, keep) == result


@pytest.mark.parametrize(
    ("group", "verdict", "result"),
    [("detail", Verdict.ADDS_DETAIL, "lost detail"), ("update", Verdict.SAME, "lost")],
)
def test_a_merge_into_the_first_side_is_scored_by_what_it_loses(
    group: str, verdict: Verdict, result: str
) -> None:
    # Decisions the code no longer makes, scored as a model's would have been.
    pair = LabelledPair(group, "en", "I play the guitar", "I play the guitar in a band", line=2)
    decision = MergeDecision(candidate(0, pair), verdict, "A", verdict.value, "A", None)
    assert outcome(pair, decision) == result
