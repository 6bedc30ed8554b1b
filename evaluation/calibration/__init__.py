"""Calibration: measuring similarity thresholds on labelled pairs (design section 8)."""

from evaluation.calibration.analysis import (
    ACTION_OF_GROUP,
    GroupStats,
    LanguageSeparation,
    Overlap,
    Recommendation,
    by_language,
    group_stats,
    overlaps,
    recommend_threshold,
)
from evaluation.calibration.pairs import (
    GROUPS,
    LabelledPair,
    PairsFileError,
    default_pairs_path,
    load_pairs,
)
from evaluation.calibration.plot import write_histogram
from evaluation.calibration.report import (
    closest_calls,
    describe_overlap,
    describe_recommendation,
    missed_at,
)
from evaluation.calibration.scoring import ScoredPair, score_pairs

__all__ = [
    "ACTION_OF_GROUP",
    "GROUPS",
    "GroupStats",
    "LabelledPair",
    "LanguageSeparation",
    "Overlap",
    "PairsFileError",
    "Recommendation",
    "ScoredPair",
    "by_language",
    "closest_calls",
    "default_pairs_path",
    "describe_overlap",
    "describe_recommendation",
    "group_stats",
    "load_pairs",
    "missed_at",
    "overlaps",
    "recommend_threshold",
    "score_pairs",
    "write_histogram",
]
