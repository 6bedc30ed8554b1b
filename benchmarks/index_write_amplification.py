"""Bytes the vector index writes per learned fact: single-fact writes, compaction included.

    .venv/bin/python -m benchmarks.index_write_amplification [--sizes 10000 100000]
        [--learned 128] [--full-text] [--json OUT]

A real LanceDB table of ``size`` facts (384 dimensions, 100 people, bulk-loaded and compacted
as reconcile leaves it), then ``--learned`` facts written one at a time as the write path
writes them (each its own ``upsert``; the index compacts every 32 writes). Measured: the bytes
the process handed to ``write`` meanwhile (``wchar`` of ``/proc/self/io``: the index is the
only writer), per learned fact, the time per learned fact, and afterwards the fragments, the
folder, and the p50 of 200 scoped searches.
Vectors are seeded random. To compare with another version of the code, run this file with
``PYTHONPATH`` set to that version's checkout.
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

import numpy as np

from benchmarks.forget_cost import DIMENSION, MODEL, PEOPLE, facts, person
from memory.index import LanceFactIndex

BATCH = 5_000
SEARCHES = 200


@dataclass(frozen=True)
class Measurement:
    facts: int
    full_text_index: bool
    learned: int
    bytes_per_learned_fact: int
    ms_per_learned_fact: float
    fragments: int
    folder_mib: float
    search_p50_ms: float


def bytes_written() -> int:
    """What this process has handed to write() so far (page cache or disk alike)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("/proc/self/io has no wchar line")


def folder_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


async def search_p50_ms(index: LanceFactIndex, rng: np.random.Generator) -> float:
    timings = []
    for number in range(SEARCHES):
        vector = rng.standard_normal(DIMENSION, dtype=np.float32)
        started = time.perf_counter()
        await index.search(person(number % PEOPLE), vector, model=MODEL, limit=5)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


async def measure(size: int, full_text: bool, learned: int, workdir: Path) -> Measurement:
    folder = workdir / f"index-{size}-{full_text}"
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, full_text_index=full_text)
    rng = np.random.default_rng(size)
    for start in range(1, size + 1, BATCH):
        await index.upsert(facts(start, min(BATCH, size + 1 - start), rng))
    await index.optimize()
    before, started = bytes_written(), time.perf_counter()
    for fact_id in range(size + 1, size + 1 + learned):
        await index.upsert(facts(fact_id, 1, rng))
    elapsed = time.perf_counter() - started
    written = bytes_written() - before
    result = Measurement(
        size,
        full_text,
        learned,
        round(written / learned),
        round(elapsed * 1000 / learned, 1),
        await index.fragment_count(),
        round(folder_mib(folder), 1),
        round(await search_p50_ms(index, rng), 2),
    )
    await index.aclose()
    return result


async def run(sizes: list[int], learned: int, full_text: bool) -> list[Measurement]:
    results = []
    with tempfile.TemporaryDirectory(prefix="mnemo-amplification-") as workdir:
        for size in sizes:
            result = await measure(size, full_text, learned, Path(workdir))
            results.append(result)
            print(
                f"{size:>7} facts, full-text index {'yes' if full_text else 'no'}: "
                f"{result.bytes_per_learned_fact / 2**10:9.1f} KiB and "
                f"{result.ms_per_learned_fact:6.1f} ms per learned fact; "
                f"{result.fragments} fragments, folder {result.folder_mib} MiB, "
                f"search p50 {result.search_p50_ms} ms",
                flush=True,
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--learned", type=int, default=128)
    parser.add_argument("--full-text", action="store_true", help="with the full-text index")
    parser.add_argument("--json", type=Path, help="also write the results here")
    arguments = parser.parse_args()
    results = asyncio.run(run(arguments.sizes, arguments.learned, arguments.full_text))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
