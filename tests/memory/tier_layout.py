"""A simulation of the index table's layout under the tiered compaction (memory/index/tiers.py):
what the tests check the real table against, and benchmarks build."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from memory.index.tiers import Coverage, FragmentSize, next_merge

INDEXED: Coverage = frozenset({"one segment"})


@dataclass(frozen=True, slots=True)
class SimulatedLayout:
    fragment_rows: list[int]
    rows_rewritten: int
    most_fragments: int


def layout_after_single_writes(
    writes: int, every: int, merge_indices_every: int
) -> SimulatedLayout:
    """The live rows of each fragment (in table order) after ``writes`` single writes into
    an empty table compacted every ``every`` writes, its index segments merged every
    ``merge_indices_every`` compactions, as Lance lays them out (a merge's result goes last
    and keeps its segment; a compaction gives the rows not indexed yet a segment of their
    own), with the rows the merges rewrote and the most fragments there were after a
    compaction."""
    ids = itertools.count()
    layout: list[FragmentSize] = []
    rewritten = most = 0
    for written in range(1, writes + 1):
        layout.append(FragmentSize(next(ids), 1, 0))
        if written % every:
            continue
        if (written // every) % merge_indices_every == 0:
            layout = [
                FragmentSize(fragment.fragment_id, fragment.stored_rows, 0, INDEXED)
                for fragment in layout
            ]
        while merged := next_merge(layout):
            rows = sum(fragment.live_rows for fragment in merged)
            layout = [fragment for fragment in layout if fragment not in merged]
            layout.append(FragmentSize(next(ids), rows, 0, merged[0].coverage))
            rewritten += rows
        most = max(most, len(layout))
    return SimulatedLayout([fragment.live_rows for fragment in layout], rewritten, most)
