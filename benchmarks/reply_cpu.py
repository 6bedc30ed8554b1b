"""The CPU one reply costs the event loop's thread, and where that time goes.

    .venv/bin/python -m benchmarks.reply_cpu [--facts 1000] [--messages 200] [--profile]

One person with ``--facts`` facts in their DM scope (and two others with as many) sends
``--messages`` statements, one after another, through ``core.handle`` with an instant
scripted model. The write queue is not worked on in this process (``apply_queued`` off), so
what is measured is the reply path alone: taking the message in, recall, the recent turns,
the prompt, the answer stored. Printed: the CPU of the event loop's thread per reply
(``time.thread_time``, which the load of other processes does not bend) and of the whole
process (the embedding's and SQLite's threads too), p50 and mean; with ``--profile``, a
cProfile of the event loop's thread over the same messages, its own time summed by package.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable

from benchmarks.core_overhead import (
    STATEMENTS,
    TimedModel,
    benchmark_config,
    fill_three_people,
    message,
)
from bot.app import Application, build_application
from tests.conftest import real_embedder

PACKAGES = (
    "sqlalchemy",
    "aiosqlite",
    "asyncio",
    "concurrent",
    "threading",
    "lancedb",
    "pyarrow",
    "numpy",
    "pydantic",
    "json",
    "logging",
)


def package_of(filename: str) -> str:
    for package in PACKAGES:
        if f"/{package}/" in filename or filename.endswith(f"/{package}.py"):
            return package
    for ours in ("bot", "memory"):
        if f"/{ours}/" in filename:
            return f"mnemo {ours}"
    return "built-ins" if filename == "~" else "other"


async def replies(application: Application, count: int, offset: int) -> tuple[list[float], ...]:
    """Per reply: the event loop thread's CPU and the process's CPU, in milliseconds."""
    loop_cpu, process_cpu = [], []
    for number in range(offset, offset + count):
        # A new text each time: the embedding's cache of recent texts would hide its cost.
        text = f"{STATEMENTS[number % len(STATEMENTS)][:-1]}, note {number}."
        thread_started, process_started = time.thread_time(), time.process_time()
        await application.core.handle(message(text, number))
        loop_cpu.append((time.thread_time() - thread_started) * 1000)
        process_cpu.append((time.process_time() - process_started) * 1000)
    return loop_cpu, process_cpu


def own_seconds_by(
    profile: cProfile.Profile, key: Callable[[str, int, str], str]
) -> dict[str, float]:
    """The profile's own time (not its callees'), summed by ``key(filename, line, name)``."""
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, object]]
    raw = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    totals: dict[str, float] = {}
    for (filename, line, name), (_, _, own, _, _) in raw.items():
        label = key(filename, line, name)
        totals[label] = totals.get(label, 0.0) + own
    return totals


def print_profile(profile: cProfile.Profile, count: int) -> None:
    by_package = own_seconds_by(profile, lambda filename, _, __: package_of(filename))
    by_function = own_seconds_by(
        profile,
        lambda filename, line, name: "/".join(filename.rsplit("/", 2)[-2:]) + f" {name}:{line}",
    )
    total = sum(by_package.values())
    print(f"\nevent loop thread, own time by package ({total / count * 1000:.2f} ms per reply):")
    for package, seconds in sorted(by_package.items(), key=lambda item: -item[1]):
        print(f"  {package:<12} {seconds / count * 1000:6.2f} ms  {seconds / total:5.1%}")
    print("\nheaviest functions (own time per reply):")
    for function, seconds in sorted(by_function.items(), key=lambda item: -item[1])[:70]:
        print(f"  {seconds / count * 1000:6.3f} ms  {function}")


async def run(fact_count: int, count: int, profiled: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        application = await build_application(
            benchmark_config(directory),
            llm=TimedModel(),
            embedder=real_embedder(),
            apply_queued=False,
        )
        try:
            await fill_three_people(application, fact_count)
            await replies(application, 40, 0)  # warm-up: caches of SQLite, LanceDB, ONNX
            loop_cpu, process_cpu = await replies(application, count, 100)
            print(
                f"{count} replies: event loop CPU p50 {statistics.median(loop_cpu):.2f} ms, "
                f"mean {statistics.fmean(loop_cpu):.2f} ms; process CPU p50 "
                f"{statistics.median(process_cpu):.2f} ms, "
                f"mean {statistics.fmean(process_cpu):.2f} ms"
            )
            if profiled:
                # The thread's CPU clock: time the loop waits in epoll is not its work.
                profile = cProfile.Profile(time.thread_time)
                profile.enable()
                await replies(application, count, 100 + count)
                profile.disable()
                print_profile(profile, count)
        finally:
            await application.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--facts", type=int, default=1000, help="facts in the speaker's scope")
    parser.add_argument("--messages", type=int, default=200, help="replies measured")
    parser.add_argument("--profile", action="store_true", help="cProfile the same replies again")
    arguments = parser.parse_args()
    asyncio.run(run(arguments.facts, arguments.messages, arguments.profile))


if __name__ == "__main__":
    main()
