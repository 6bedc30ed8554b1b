"""Reciprocal-rank fusion as the reference harness computes it (k=60)."""

from __future__ import annotations

import pytest

from memory.recall import reciprocal_rank_fusion


def test_items_in_both_lists_rise() -> None:
    fused = reciprocal_rank_fusion([[1, 2, 3], [3, 4]], k=60)
    assert [item for item, _ in fused] == [3, 1, 2, 4]
    assert dict(fused)[3] == pytest.approx(1 / 63 + 1 / 61)
    assert dict(fused)[4] == pytest.approx(1 / 62)


def test_ties_keep_the_first_lists_order() -> None:
    fused = reciprocal_rank_fusion([[7, 8], [8, 7]], k=60)
    assert [item for item, _ in fused] == [7, 8]


def test_empty_lists() -> None:
    assert reciprocal_rank_fusion([[], []]) == []
