"""Plain sentences about a calibration: what an operator reads after the table."""

from __future__ import annotations

from collections.abc import Sequence

from evaluation.calibration.analysis import (
    ACTION_OF_GROUP,
    NOT_A_CANDIDATE,
    Overlap,
    Recommendation,
)
from evaluation.calibration.scoring import ScoredPair


def describe_overlap(overlap: Overlap) -> str:
    where = (
        f"{overlap.first} ({ACTION_OF_GROUP[overlap.first]}) and {overlap.second} "
        f"({ACTION_OF_GROUP[overlap.second]}) overlap at {overlap.low:.2f}-{overlap.high:.2f} "
        f"({overlap.first_inside} and {overlap.second_inside} pairs inside): "
    )
    if NOT_A_CANDIDATE in (overlap.first, overlap.second):
        return where + (
            "no candidate threshold keeps every such pair in while leaving every unrelated "
            "pair out; the threshold gives the margin to recall."
        )
    return where + "no threshold separates them, the LLM has to decide."


def describe_recommendation(recommendation: Recommendation) -> list[str]:
    lines = [
        f"recommended memory.candidate_threshold = {recommendation.threshold:.2f} "
        f"(lowest pair that must be a candidate: {recommendation.lowest_candidate:.2f}, "
        f"margin {recommendation.margin:.2f} given to recall)"
    ]
    if recommendation.highest_unrelated is None:
        lines.append("no unrelated pairs: the cost of the threshold is not measured.")
    elif recommendation.separable:
        lines.append(
            f"unrelated pairs reach {recommendation.highest_unrelated:.2f}, below every other "
            f"group: {recommendation.unrelated_passing} of {recommendation.unrelated_total} "
            "pass the threshold."
        )
    else:
        lines.append(
            f"no threshold separates unrelated pairs from the others: unrelated reach "
            f"{recommendation.highest_unrelated:.2f}, above the lowest candidate "
            f"{recommendation.lowest_candidate:.2f}; at the recommended threshold "
            f"{recommendation.unrelated_passing} of {recommendation.unrelated_total} unrelated "
            "pairs become candidates (extra LLM calls, no lost corrections)."
        )
    return lines


def missed_at(scored: Sequence[ScoredPair], threshold: float) -> list[ScoredPair]:
    """Pairs that must be candidates but score below ``threshold``."""
    return [
        item
        for item in scored
        if item.pair.group != NOT_A_CANDIDATE and item.similarity < threshold
    ]


def closest_calls(scored: Sequence[ScoredPair], count: int = 3) -> list[ScoredPair]:
    """The lowest pairs that must be candidates and the highest unrelated ones."""
    candidates = sorted(
        (item for item in scored if item.pair.group != NOT_A_CANDIDATE),
        key=lambda item: item.similarity,
    )
    unrelated = sorted(
        (item for item in scored if item.pair.group == NOT_A_CANDIDATE),
        key=lambda item: item.similarity,
        reverse=True,
    )
    return candidates[:count] + unrelated[:count]
