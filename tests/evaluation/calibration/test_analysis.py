"""Group ranges, overlaps and the threshold, on hand-made scores."""

from __future__ import annotations

import pytest

from evaluation.calibration import (
    LabelledPair,
    ScoredPair,
    by_language,
    describe_overlap,
    describe_recommendation,
    group_stats,
    missed_at,
    overlaps,
    recommend_threshold,
)


def _scored(*items: tuple[str, float]) -> list[ScoredPair]:
    return [
        ScoredPair(LabelledPair(group, "en", f"a{n}", f"b{n}", n + 2), similarity)
        for n, (group, similarity) in enumerate(items)
    ]


SEPARABLE = _scored(
    ("same", 0.9),
    ("same", 0.8),
    ("update", 0.85),
    ("update", 0.5),
    ("negation", 0.7),
    ("unrelated", 0.1),
    ("unrelated", 0.2),
)


def test_group_stats() -> None:
    stats = {item.group: item for item in group_stats(SEPARABLE)}
    assert list(stats) == ["same", "update", "negation", "unrelated"]
    assert stats["update"].count == 2
    assert (stats["update"].minimum, stats["update"].maximum) == (0.5, 0.85)
    assert stats["update"].mean == pytest.approx(0.675)


def test_overlaps_between_groups_needing_different_actions() -> None:
    found = {(o.first, o.second): o for o in overlaps(SEPARABLE)}
    assert set(found) == {("same", "update"), ("update", "negation")}
    same_update = found[("same", "update")]
    assert (same_update.low, same_update.high) == (0.8, 0.85)
    assert (same_update.first_inside, same_update.second_inside) == (1, 1)
    assert "no threshold separates them" in describe_overlap(same_update)


def test_threshold_is_a_margin_below_the_lowest_candidate() -> None:
    recommendation = recommend_threshold(SEPARABLE, margin=0.05)
    assert recommendation.threshold == pytest.approx(0.45)
    assert recommendation.separable
    assert recommendation.unrelated_passing == 0
    assert missed_at(SEPARABLE, recommendation.threshold) == []
    assert len(missed_at(SEPARABLE, 0.6)) == 1
    assert "below every other group" in " ".join(describe_recommendation(recommendation))


def test_threshold_rounds_down_towards_recall() -> None:
    scored = _scored(("detail", 0.3678), ("unrelated", 0.1))
    assert recommend_threshold(scored, margin=0.05).threshold == pytest.approx(0.31)


def test_says_plainly_when_no_threshold_separates_unrelated() -> None:
    scored = _scored(("detail", 0.36), ("same", 0.9), ("unrelated", 0.41), ("unrelated", 0.33))
    recommendation = recommend_threshold(scored, margin=0.05)
    assert not recommendation.separable
    assert recommendation.threshold == pytest.approx(0.31)
    assert recommendation.unrelated_passing == 2
    text = " ".join(describe_recommendation(recommendation))
    assert "no threshold separates unrelated pairs from the others" in text
    (overlap,) = [o for o in overlaps(scored) if "unrelated" in (o.first, o.second)]
    assert "no candidate threshold keeps every such pair in" in describe_overlap(overlap)


def test_needs_candidate_pairs() -> None:
    with pytest.raises(ValueError, match="no pairs"):
        recommend_threshold(_scored(("unrelated", 0.1)))


def test_each_language_is_checked_on_its_own() -> None:
    pairs = [
        ("en", "update", 0.36),
        ("en", "unrelated", 0.20),
        ("de", "negation", 0.60),
        ("de", "unrelated", 0.41),
        ("fr", "unrelated", 0.41),
        ("it", "same", 0.70),
        ("it", "unrelated", 0.75),
    ]
    scored = [
        ScoredPair(LabelledPair(group, language, f"a{n}", f"b{n}", n + 2), similarity)
        for n, (language, group, similarity) in enumerate(pairs)
    ]
    found = {item.language: item for item in by_language(scored)}
    assert [found[language].separable for language in ("de", "en", "fr", "it")] == [
        True,
        True,
        None,
        False,
    ]
    assert found["it"].highest_unrelated == 0.75
    assert found["de"].lowest_candidate == 0.60
    # Across languages no threshold works (0.41 > 0.36), though de and en each separate.
    assert not recommend_threshold(scored).separable
