"""Which fragments of the index table to merge, in tiers of similar size.

Every single write adds a fragment of one row, and every fragment costs a search time. Merging
all of them into one at each compaction rewrites the whole table every time (what LanceDB's
``optimize()`` does); merging only the small ones leaves a fragment per 8,192 rows. Merged in
tiers instead, a fragment is merged once it has ``MERGE_WIDTH - 1`` neighbours of its own size
class, so each row is rewritten once per tier (about six times at 100,000 facts) and the table
keeps O(log n) fragments: at most ``MERGE_WIDTH - 1`` of each size class.

Lance merges only adjacent fragments (in the table's order, where a merge puts its result
last) that the same index segments cover: a tier is a run of adjacent fragments of the same
size class and the same segments. Fragments that different segments cover wait for the
segments to be merged (every few compactions, see memory/index/lance.py), which rewrites
every index: merging the segments for each tier merge would cost more than the tiers save.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Fragments of one size class (rows within a factor of MERGE_WIDTH) merged together once there
# are this many side by side. Search time and rows rewritten per fact are in docs/benchmarks.md.
MERGE_WIDTH = 4
# A fragment with this share of its rows deleted is rewritten (alone if no merge takes it),
# as Lance's compaction does by default: the deleted rows' bytes go with it.
DELETED_SHARE_TO_REWRITE = 0.1
# If the order of the fragments keeps similar ones apart (deletes shrink old fragments), the
# two smallest neighbours are merged while there are more fragments than this.
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
    """The fragments to merge next (adjacent, in table order, covered alike), or none if the
    layout is settled: the run of the smallest size class that is ``MERGE_WIDTH`` long or
    more; else a fragment holding many deleted rows; else, if there are too many fragments,
    the two adjacent ones of the fewest rows."""
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
