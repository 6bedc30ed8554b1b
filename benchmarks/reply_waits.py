"""Where a reply's wall time goes under load: what each reply waited for, and how long the
store's write jobs took, from hand-over to commit, for replies and for background work.

    python benchmarks/reply_waits.py [--scenarios 50x4,50x4b] [--warm]

The scenarios of ``benchmarks/load_session.py`` (same people, facts and instant model) on the
current code, with timers wrapped around the parts of a reply (a measuring double of each:
the real method runs inside): taking the message in and its wait for the writer,
recall's embedding and index search, the recent turns, storing the answer. Printed per
scenario: the mean per reply, the same per message of each person (the first, the second...),
the slowest replies, and the write jobs of replies and of background work (the write queue).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import numpy as np

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

from benchmarks import load_session  # noqa: E402
from bot.core import core as core_module  # noqa: E402
from memory.embedding import batching  # noqa: E402
from memory.index import lance  # noqa: E402
from memory.priority import Priority  # noqa: E402
from memory.store.database import Database  # noqa: E402

Parts = dict[str, float]
spent: dict[asyncio.Task[Any], Parts] = {}
# The tasks of the replies being measured.
reply_tasks: set[asyncio.Task[Any]] = set()
held: dict[str, list[float]] = collections.defaultdict(list)
# Each reply: its wall time, its parts, and which of its person's messages it answered.
replies: list[tuple[float, Parts, int]] = []


def add(part: str, seconds: float) -> None:
    task = asyncio.current_task()
    if task in reply_tasks:
        parts = spent.setdefault(task, {})
        parts[part] = parts.get(part, 0.0) + seconds


def timed(owner: type, name: str, part: str) -> None:
    original: Callable[..., Awaitable[Any]] = getattr(owner, name)

    async def measured(*arguments: Any, **keywords: Any) -> Any:
        started = time.perf_counter()
        try:
            return await original(*arguments, **keywords)
        finally:
            add(part, time.perf_counter() - started)

    setattr(owner, name, measured)


def time_write_jobs() -> None:
    original = Database.run

    async def run(self: Database, job: Any, priority: Priority) -> Any:
        started = time.perf_counter()
        try:
            return await original(self, job, priority)
        finally:
            seconds = time.perf_counter() - started
            held[priority.value].append(seconds)
            add("store write (wait and commit)", seconds)

    Database.run = run  # type: ignore[method-assign]


def time_replies() -> None:
    original = load_session.Session.send

    async def send(self: load_session.Session, person: int, number: int, text: str) -> float:
        task = asyncio.current_task()
        assert task is not None
        reply_tasks.add(task)
        try:
            latency = await original(self, person, number, text)
        finally:
            reply_tasks.discard(task)
        replies.append((latency, spent.pop(task, {}), number))
        return latency

    load_session.Session.send = send  # type: ignore[method-assign]


def mean_parts(chosen: list[tuple[float, Parts, int]]) -> tuple[float, dict[str, int]]:
    """The mean wall time of these replies and of each part, in ms."""
    total: Parts = {}
    for _, parts, _ in chosen:
        for part, seconds in parts.items():
            total[part] = total.get(part, 0.0) + seconds
    count = len(chosen)
    wall = sum(latency for latency, _, _ in chosen) * 1000 / count
    return wall, {part: round(seconds * 1000 / count) for part, seconds in total.items()}


def report(label: str) -> None:
    replies.sort(key=lambda reply: -reply[0])
    wall, mean = mean_parts(replies)
    print(f"{label}: mean per reply {wall:.0f} ms, of it (ms): {mean}")
    for number in sorted({reply[2] for reply in replies}):
        chosen = [reply for reply in replies if reply[2] == number]
        wall, mean = mean_parts(chosen)
        p95 = np.percentile([reply[0] * 1000 for reply in chosen], 95)
        print(f"  message {number}: p95 {p95:.0f} ms, mean {wall:.0f} ms, of it (ms): {mean}")
    for holder, holds in held.items():
        held_ms = np.asarray(holds) * 1000
        print(
            f"  write jobs of {holder}: {len(held_ms)}, {held_ms.sum():.0f} ms in "
            f"all, p50 {np.percentile(held_ms, 50):.1f} ms, p95 {np.percentile(held_ms, 95):.1f}"
            f" ms, max {held_ms.max():.0f} ms"
        )
    for latency, parts, _ in replies[:3]:
        slowest = {part: round(seconds * 1000) for part, seconds in parts.items()}
        print(f"  a slowest reply: {latency * 1000:.0f} ms, of it (ms): {slowest}")


def instrument() -> None:
    timed(batching.EmbeddingBatcher, "embed", "embedding")
    timed(lance.LanceFactIndex, "search", "index search")
    core = core_module.ConversationCore
    timed(core, "_take_in", "taking in (after the intake lock)")
    timed(core, "_memories", "recall and turns")
    timed(core, "_keep_answer", "storing the answer")
    time_write_jobs()
    time_replies()


async def measure(scenarios: list[load_session.Scenario], warm: bool) -> None:
    original = load_session.Session.run

    async def run(
        self: load_session.Session,
        number: int,
        scenario: load_session.Scenario,
        locked: load_session.LockedErrors,
    ) -> load_session.ScenarioResult:
        replies.clear()
        held.clear()
        result = await original(self, number, scenario, locked)
        if number != 99:  # not the warm-up
            print(
                f"{scenario.label}, load {result.load_before:.1f}: reply p95 "
                f"{result.reply_p95_ms:.0f} ms, max {result.reply_max_ms:.0f} ms"
            )
            report(scenario.label)
        return result

    load_session.Session.run = run  # type: ignore[method-assign]
    people = max(scenario.people for scenario in scenarios)
    await load_session.measure(scenarios, people, 1000, None, warm=warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--scenarios", default="50x4,50x4b")
    parser.add_argument(
        "--warm", action="store_true", help="search each person's scope once before timing"
    )
    arguments = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    instrument()
    scenarios = [load_session.Scenario.parse(text) for text in arguments.scenarios.split(",")]
    asyncio.run(measure(scenarios, arguments.warm))


if __name__ == "__main__":
    main()
