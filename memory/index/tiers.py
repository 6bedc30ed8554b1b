"""Which fragments of the index table to merge, in tiers of similar size.

A fragment is merged once it has ``MERGE_WIDTH - 1`` neighbours of its size class, so each
row is rewritten once per tier and the table keeps O(log n) fragments. Lance merges only
adjacent fragments that the same index segments cover; others wait for the segments' merge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Fragments of one size class (rows within a factor of MERGE_WIDTH) merged once this many.
MERGE_WIDTH = 4
# A fragment with this share of its rows deleted is rewritten, as Lance does by default.
DELETED_SHARE_TO_REWRITE = 0.1
# Above this many fragments the two smallest neighbours merge (deletes may keep tiers apart).
MOST_FRAGMENTS = 24
# The index segments that cover a fragment (none: not indexed yet).
Coverage = frozenset[str]
NOT_INDEXED: Coverage = frozenset()


@dataclass(frozen=True, slots=True)
class FragmentSize:
    fragment_id: int
    stored_rows: int
    deleted_rows: int
    coverage: Coverage = NOT_INDEXED

    @property
    def live_rows(self) -> int:
        return self.stored_rows - self.deleted_rows

    @property
    def size_class(self) -> int:
        return int(math.log(max(self.live_rows, 1), MERGE_WIDTH))

    @property
    def mostly_deleted(self) -> bool:
        return self.deleted_rows > DELETED_SHARE_TO_REWRITE * self.stored_rows


def next_merge(fragments: Sequence[FragmentSize]) -> list[FragmentSize]:
    """The fragments to merge next (adjacent, covered alike), or none: the shortest-class run
    of ``MERGE_WIDTH``, else a mostly deleted fragment, else the two smallest neighbours."""
    runs = _runs(fragments, lambda fragment: (fragment.size_class, fragment.coverage))
    long_runs = [run for run in runs if len(run) >= MERGE_WIDTH]
    if long_runs:
        return min(long_runs, key=lambda run: run[0].size_class)
    for fragment in fragments:
        if fragment.mostly_deleted:
            return [fragment]
    if len(fragments) > MOST_FRAGMENTS:
        pairs = [
            list(fragments[at : at + 2])
            for at in range(len(fragments) - 1)
            if fragments[at].coverage == fragments[at + 1].coverage
        ]
        if pairs:
            return min(pairs, key=lambda pair: sum(fragment.live_rows for fragment in pair))
    return []


def _runs(
    fragments: Sequence[FragmentSize], kind: Callable[[FragmentSize], object]
) -> list[list[FragmentSize]]:
    runs: list[list[FragmentSize]] = []
    for fragment in fragments:
        if runs and kind(runs[-1][-1]) == kind(fragment):
            runs[-1].append(fragment)
        else:
            runs.append([fragment])
    return runs
