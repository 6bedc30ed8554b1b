"""From scored pairs to a threshold: per-group ranges, overlaps, and the recommendation.

Every group but ``unrelated`` must pass the threshold (a missed candidate is a lost
correction, a passing unrelated pair only an LLM call), so the cut is a margin below the
lowest pair that must pass; overlaps are reported per group and per language.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import fmean

from evaluation.calibration.pairs import GROUPS
from evaluation.calibration.scoring import ScoredPair

NOT_A_CANDIDATE = "unrelated"

ACTION_OF_GROUP = {
    "same": "NONE (duplicate)",
    "update": "UPDATE",
    "detail": "UPDATE, keeping the detail",
    "different": "ADD, keeping both",
    "negation": "DELETE",
    "unrelated": "not a candidate",
}


@dataclass(frozen=True, slots=True)
class GroupStats:
    group: str
    count: int
    minimum: float
    maximum: float
    mean: float


@dataclass(frozen=True, slots=True)
class Overlap:
    """Two groups needing different actions whose similarity ranges share ``[low, high]``."""

    first: str
    second: str
    low: float
    high: float
    first_inside: int
    second_inside: int


@dataclass(frozen=True, slots=True)
class Recommendation:
    threshold: float
    margin: float
    lowest_candidate: float
    highest_unrelated: float | None
    separable: bool
    """Whether any threshold puts every unrelated pair below every other pair."""
    unrelated_passing: int
    unrelated_total: int


@dataclass(frozen=True, slots=True)
class LanguageSeparation:
    """Whether the unrelated pairs of one language stay below its pairs that must pass."""

    language: str
    pairs: int
    lowest_candidate: float | None
    highest_unrelated: float | None

    @property
    def separable(self) -> bool | None:
        """None when the language lacks one of the two sides."""
        if self.lowest_candidate is None or self.highest_unrelated is None:
            return None
        return self.highest_unrelated < self.lowest_candidate


def by_language(scored: Sequence[ScoredPair]) -> list[LanguageSeparation]:
    found = []
    for language in sorted({item.pair.language for item in scored}):
        mine = [item for item in scored if item.pair.language == language]
        candidates = [i.similarity for i in mine if i.pair.group != NOT_A_CANDIDATE]
        unrelated = [i.similarity for i in mine if i.pair.group == NOT_A_CANDIDATE]
        found.append(
            LanguageSeparation(
                language,
                len(mine),
                min(candidates) if candidates else None,
                max(unrelated) if unrelated else None,
            )
        )
    return found


def group_stats(scored: Sequence[ScoredPair]) -> list[GroupStats]:
    stats = []
    for group in GROUPS:
        values = [item.similarity for item in scored if item.pair.group == group]
        if values:
            stats.append(GroupStats(group, len(values), min(values), max(values), fmean(values)))
    return stats


def overlaps(scored: Sequence[ScoredPair]) -> list[Overlap]:
    """Every pair of groups with different actions whose ranges intersect."""
    stats = {item.group: item for item in group_stats(scored)}
    found = []
    for first, second in combinations(stats, 2):
        if ACTION_OF_GROUP[first] == ACTION_OF_GROUP[second]:
            continue
        low = max(stats[first].minimum, stats[second].minimum)
        high = min(stats[first].maximum, stats[second].maximum)
        if low <= high:
            found.append(
                Overlap(
                    first,
                    second,
                    low,
                    high,
                    _inside(scored, first, low, high),
                    _inside(scored, second, low, high),
                )
            )
    return found


def _inside(scored: Sequence[ScoredPair], group: str, low: float, high: float) -> int:
    return sum(1 for i in scored if i.pair.group == group and low <= i.similarity <= high)


def recommend_threshold(scored: Sequence[ScoredPair], *, margin: float = 0.05) -> Recommendation:
    """A margin below the lowest pair that must be a candidate, rounded down to 0.01."""
    candidates = [item.similarity for item in scored if item.pair.group != NOT_A_CANDIDATE]
    unrelated = [item.similarity for item in scored if item.pair.group == NOT_A_CANDIDATE]
    if not candidates:
        raise ValueError("no pairs of the groups that must be candidates")
    lowest = min(candidates)
    threshold = math.floor((lowest - margin) * 100) / 100
    highest_unrelated = max(unrelated) if unrelated else None
    return Recommendation(
        threshold=threshold,
        margin=margin,
        lowest_candidate=lowest,
        highest_unrelated=highest_unrelated,
        separable=highest_unrelated is None or highest_unrelated < lowest,
        unrelated_passing=sum(1 for value in unrelated if value >= threshold),
        unrelated_total=len(unrelated),
    )
