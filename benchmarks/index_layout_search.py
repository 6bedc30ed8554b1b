"""Search time of the index by the layout of its fragments, the scope cache off.

    .venv/bin/python -m benchmarks.index_layout_search [--facts 100000] [--rounds 3]
        [--json OUT]

The same ``--facts`` facts (384 dimensions, 100 people, seeded random vectors) laid out three
ways, as a table of that size looks after single writes under each compaction policy:
"one fragment" (a bulk load, or an erase, which rewrites everything); "small only" (what
commit a2bdccf's compaction left: fragments of 8,192 rows and a tail); "tiered" (what this
code's compaction leaves, :func:`layout_after_single_writes`). Each layout is built by
appending one fragment per write of its size, and measured twice: with one index segment
per fragment (the indices taking each compaction's rows as a segment of their own, before a
merge) and with the segments merged into one. Measured: p50 and p95 of 200 scoped searches
(the write path's candidate search, limit 6) through LanceDB, the layouts in alternation for
``--rounds`` rounds, so that the machine's load falls on all alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import lance
import numpy as np

from benchmarks.forget_cost import DIMENSION, MODEL, PEOPLE, facts, person
from memory.index import LanceFactIndex
from memory.index.lance import MERGE_INDICES_EVERY, table_folder
from tests.memory.tier_layout import layout_after_single_writes

SEARCHES = 200
SMALL_ONLY_TARGET = 8_192
OPTIMIZE_EVERY = 32
NEVER = 10**9


@dataclass(frozen=True)
class Measurement:
    layout: str
    fragments: int
    segments: int
    round: int
    p50_ms: float
    p95_ms: float


def layouts(size: int) -> dict[str, list[int]]:
    full, tail = divmod(size, SMALL_ONLY_TARGET)
    return {
        "one fragment": [size],
        "small only": [SMALL_ONLY_TARGET] * full + ([tail] if tail else []),
        "tiered": layout_after_single_writes(
            size, OPTIMIZE_EVERY, MERGE_INDICES_EVERY
        ).fragment_rows,
    }


async def built(folder: Path, fragment_rows: list[int], merged_segments: bool) -> LanceFactIndex:
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=NEVER)
    rng = np.random.default_rng(len(fragment_rows))
    start = 1
    for rows in fragment_rows:
        await index.upsert(facts(start, rows, rng))
        await asyncio.to_thread(_index_new_rows, table_folder(folder), merge=False)
        start += rows
    if merged_segments:
        await asyncio.to_thread(_index_new_rows, table_folder(folder), merge=True)
    return index


def _index_new_rows(dataset: Path, *, merge: bool) -> None:
    lance.dataset(str(dataset)).optimize.optimize_indices(
        num_indices_to_merge=10**6 if merge else 0
    )


def segments(folder: Path) -> int:
    described = lance.dataset(str(table_folder(folder))).describe_indices()
    return max(len(index.segments) for index in described)


async def timings_ms(index: LanceFactIndex, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    timings = []
    for number in range(SEARCHES):
        vector = rng.standard_normal(DIMENSION, dtype=np.float32)
        started = time.perf_counter()
        await index.search(person(number % PEOPLE), vector, model=MODEL, limit=6)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


async def run(size: int, rounds: int, workdir: Path) -> list[Measurement]:
    opened: dict[tuple[str, bool], tuple[Path, int]] = {}
    for name, fragment_rows in layouts(size).items():
        for merged in (False, True):
            folder = workdir / f"{name.replace(' ', '-')}-{merged}"
            index = await built(folder, fragment_rows, merged)
            opened[name, merged] = (folder, await index.fragment_count())
            await index.aclose()
    results = []
    for round_number in range(1, rounds + 1):
        for (name, _), (folder, fragments) in opened.items():
            # A fresh handle: LanceDB's caches start cold, as after a restart.
            fresh = await LanceFactIndex.open(folder, dimension=DIMENSION, optimize_every=NEVER)
            timings = await timings_ms(fresh, round_number)
            await fresh.aclose()
            quantiles = statistics.quantiles(timings, n=20)
            result = Measurement(
                name,
                fragments,
                segments(folder),
                round_number,
                round(statistics.median(timings), 2),
                round(quantiles[18], 2),
            )
            results.append(result)
            print(
                f"round {round_number} {name:>12}: {fragments:3} fragments, "
                f"{result.segments:3} index segments: p50 {result.p50_ms:7.2f} ms, "
                f"p95 {result.p95_ms:7.2f} ms",
                flush=True,
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the results here")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnemo-layout-") as workdir:
        results = asyncio.run(run(arguments.facts, arguments.rounds, Path(workdir)))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
