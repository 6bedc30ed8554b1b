"""The tiered merge plan: few fragments, few rewrites per row, whatever the order."""

from __future__ import annotations

import math

from memory.index.lance import MERGE_INDICES_EVERY
from memory.index.tiers import (
    MERGE_WIDTH,
    MOST_FRAGMENTS,
    FragmentSize,
    next_merge,
)
from tests.memory.tier_layout import layout_after_single_writes


def test_a_hundred_thousand_single_writes_keep_few_fragments_and_few_rewrites() -> None:
    layout = layout_after_single_writes(100_000, 32, MERGE_INDICES_EVERY)
    assert sum(layout.fragment_rows) == 100_000
    classes = 1 + math.log(100_000, MERGE_WIDTH)
    assert layout.most_fragments <= (MERGE_WIDTH - 1) * classes
    # Each row is rewritten about once per size class it passes through.
    assert layout.rows_rewritten / 100_000 <= classes


def test_the_smallest_long_run_is_merged_first() -> None:
    fragments = [
        FragmentSize(n, rows, 0) for n, rows in enumerate([9000, 40, 40, 40, 40, 1, 1, 1, 1])
    ]
    assert [fragment.fragment_id for fragment in next_merge(fragments)] == [5, 6, 7, 8]


def test_similar_fragments_apart_are_not_merged_until_there_are_too_many() -> None:
    alternating = [FragmentSize(n, 5000 if n % 2 else 20, 0) for n in range(MOST_FRAGMENTS)]
    assert next_merge(alternating) == []
    one_more = [*alternating, FragmentSize(MOST_FRAGMENTS, 5000, 0)]
    assert [fragment.fragment_id for fragment in next_merge(one_more)] == [0, 1]


def test_a_fragment_with_many_deleted_rows_is_rewritten() -> None:
    fragments = [FragmentSize(0, 9000, 8000), FragmentSize(1, 30, 0)]
    assert next_merge(fragments) == [fragments[0]]
    assert next_merge([FragmentSize(0, 9000, 800), FragmentSize(1, 30, 0)]) == []
