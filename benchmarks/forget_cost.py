"""What forgetting for good costs in the vector index: ``erase`` at 1k, 10k and 100k facts.

    .venv/bin/python -m benchmarks.forget_cost [--sizes 1000 10000 100000] [--repeats 5]
        [--json OUT]

A real LanceDB table of ``size`` facts (384 dimensions, 100 people, bulk-loaded and compacted
as reconcile leaves it), with and without the full-text index hybrid recall builds. Measured:
``erase`` of one fact (``forget <n>``, median of ``--repeats``), ``erase`` of one person's
facts (``forget all``: size/100 facts), a plain ``delete`` of one fact (what the index did
before: the bytes stay), and :func:`verify_files`, the full read the self-healing index does
at start-up and before each reconcile. Vectors are seeded random: erase cost does not depend
on what they say.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from memory.index import IndexedFact, LanceFactIndex
from memory.index.lance import verify_files
from memory.scope import Scope

DIMENSION = 384
PEOPLE = 100
MODEL = "bench-model"
BATCH = 2_000


@dataclass(frozen=True)
class Measurement:
    facts: int
    full_text_index: bool
    erase_one_ms: float
    erase_person_ms: float
    delete_one_ms: float
    verify_ms: float
    folder_mib: float


def person(number: int) -> Scope:
    return Scope(f"console:user{number}", "console:room1")


def facts(start: int, count: int, rng: np.random.Generator) -> list[IndexedFact]:
    vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    return [
        IndexedFact(
            fact_id,
            person(fact_id % PEOPLE).owner,
            "console:room1",
            f"Fact {fact_id}: my friend number {fact_id % 97} likes board games on Sundays",
            vectors[offset],
            MODEL,
        )
        for offset, fact_id in enumerate(range(start, start + count))
    ]


async def filled_index(folder: Path, size: int, full_text: bool) -> LanceFactIndex:
    index = await LanceFactIndex.open(folder, dimension=DIMENSION, full_text_index=full_text)
    rng = np.random.default_rng(size)
    for start in range(1, size + 1, BATCH):
        await index.upsert(facts(start, min(BATCH, size + 1 - start), rng))
    await index.optimize()
    return index


async def timed_ms(operation: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await operation()
    return (time.perf_counter() - started) * 1000


def folder_mib(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


async def measure(size: int, full_text: bool, repeats: int, workdir: Path) -> Measurement:
    folder = workdir / f"index-{size}-{full_text}"
    index = await filled_index(folder, size, full_text)
    delete_one = await timed_ms(lambda: index.delete([1]))
    await index.optimize()
    erase_one = statistics.median(
        [await timed_ms(partial(index.erase, [fact_id])) for fact_id in range(2, 2 + repeats)]
    )
    person_ids = list(range(PEOPLE + 50, size + 1, PEOPLE))  # one person's remaining facts
    erase_person = await timed_ms(lambda: index.erase(person_ids))
    verify = await timed_ms(lambda: verify_files(folder))
    size_mib = folder_mib(folder)
    await index.aclose()
    return Measurement(
        size, full_text, erase_one, erase_person, delete_one, verify, round(size_mib, 1)
    )


async def run(sizes: list[int], repeats: int) -> list[Measurement]:
    results = []
    with tempfile.TemporaryDirectory(prefix="mnemo-forget-") as workdir:
        for size in sizes:
            for full_text in (False, True):
                result = await measure(size, full_text, repeats, Path(workdir))
                results.append(result)
                print(
                    f"{size:>7} facts, full-text index {'yes' if full_text else 'no ':3}: "
                    f"erase 1 {result.erase_one_ms:7.0f} ms, erase {size // PEOPLE} "
                    f"{result.erase_person_ms:7.0f} ms, delete 1 {result.delete_one_ms:5.0f} ms, "
                    f"verify {result.verify_ms:6.0f} ms, folder {result.folder_mib} MiB",
                    flush=True,
                )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    arguments = parser.parse_args()
    results = asyncio.run(run(arguments.sizes, arguments.repeats))
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(r) for r in results], indent=2))


if __name__ == "__main__":
    main()
