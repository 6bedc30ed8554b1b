"""The bot's own time under load: N people sending M messages at once through the core.

    .venv/bin/python -m benchmarks.load [--base /work/base-load] [--facts 1000]
        [--scenarios 1x20,10x10,50x4,50x4b] [--rounds 1] [--warm] [--background-calls N]

Each scenario ``NxM`` has N people at once send M messages each, one after another (each
waits for its answer, as people chat; ``NxMb``: all N x M messages at once, a burst) through
``ConversationCore.handle``, with an instant LLM stand-in (every
millisecond is Mnemo's own) and ``--facts`` facts per person already stored. Reported per
scenario: reply p50/p95/max, replies/s (until the last reply), the time until the write
queue is empty, facts/s over that time, and the checks that nothing was lost or mixed up
(every fact in its speaker's scope, the queue empty, no "database is locked" in the log).

The code under test and ``--base`` (a worktree of an older commit, e.g. today's main made with
``git worktree add /work/base-load 3844196``) each run in a child process
(``benchmarks/load_session.py``), one after the other, ``--rounds`` times, and the table
shows both and their ratio: the machine is shared and noisy, so only numbers from the same
run are compared. The load average (1 minute) before each scenario is printed beside it.
``--warm``: each person's scope is searched once before the timed scenarios, so that neither
version's first replies load scopes into memory (the base warms them at start itself).
``--background-calls N``: memory work's model calls at once for the code that has the
setting (0e8e50a sends up to four; today's default is one, for a one-slot model server).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
SESSION = Path(__file__).resolve().parent / "load_session.py"
COLUMNS = (
    ("reply_p50_ms", "reply p50", "{:,.0f} ms"),
    ("reply_p95_ms", "reply p95", "{:,.0f} ms"),
    ("reply_max_ms", "max", "{:,.0f} ms"),
    ("replies_per_second", "replies/s", "{:.1f}"),
    ("facts_per_second", "facts/s", "{:.1f}"),
    ("drain_seconds", "queue drained", "{:.1f} s"),
    ("load_before", "load", "{:.1f}"),
)
CHECKS = ("misplaced_facts", "missing_facts", "queued_after_drain", "locked_errors")


def run_session(code: Path, facts: int, scenarios: str, options: list[str]) -> list[dict[str, Any]]:
    command = [
        sys.executable,
        str(SESSION),
        "--code",
        str(code),
        "--facts",
        str(facts),
        "--scenarios",
        scenarios,
        *options,
    ]
    print(f"running {code} ...", file=sys.stderr, flush=True)
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise SystemExit(f"{code} failed:\n{finished.stderr[-3000:]}")
    sys.stderr.write(finished.stderr[-500:])
    results: list[dict[str, Any]] = json.loads(finished.stdout.strip().splitlines()[-1])["results"]
    return results


def median_of(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per scenario, the median of each number over the rounds (checks: the worst)."""
    merged = []
    for rows in zip(*runs, strict=True):
        row: dict[str, Any] = {"label": rows[0]["label"]}
        for key, _, _ in COLUMNS:
            row[key] = statistics.median(r[key] for r in rows)
        for key in CHECKS:
            row[key] = max(r[key] for r in rows)
        merged.append(row)
    return merged


def print_table(base: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    header = ["people x messages", "code", *(title for _, title, _ in COLUMNS), "checks"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for old_row, new_row in zip(base, new, strict=True):
        for name, row in (("base", old_row), ("new", new_row)):
            cells = [row["label"], name]
            cells += [form.format(row[key]) for key, _, form in COLUMNS]
            cells.append(checks(row))
            print("| " + " | ".join(cells) + " |")
        ratios = [new_row["label"], "new/base"]
        ratios += [f"{ratio(new_row[key], old_row[key]):.2f}x" for key, _, _ in COLUMNS[:-1]]
        ratios += ["", ""]
        print("| " + " | ".join(ratios) + " |")


def print_time_table(base: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    """What the replies cost in CPU, where the CPU time went (seconds, by thread group, until
    the queue drained) and how long the loop was blocked."""
    groups = sorted({group for row in [*base, *new] for group in row["cpu_seconds"]})
    header = ["people x messages", "code", "CPU per reply (process / loop)"]
    header += ["loop lag p99", "loop lag max", *groups]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for old_row, new_row in zip(base, new, strict=True):
        for name, row in (("base", old_row), ("new", new_row)):
            cells = [row["label"], name]
            cells.append(f"{row['reply_cpu_ms']:.1f} / {row['reply_loop_cpu_ms']:.1f} ms")
            cells += [f"{row['loop_lag_p99_ms']:,.0f} ms", f"{row['loop_lag_max_ms']:,.0f} ms"]
            cells += [f"{row['cpu_seconds'].get(group, 0.0):.1f} s" for group in groups]
            print("| " + " | ".join(cells) + " |")


def ratio(new: float, old: float) -> float:
    return new / old if old else float("inf")


def checks(row: dict[str, Any]) -> str:
    problems = [f"{key} {row[key]}" for key in CHECKS if row[key]]
    return "ok" if not problems else ", ".join(problems)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, default=Path("/work/base-load"))
    parser.add_argument("--facts", type=int, default=1000, help="facts per person")
    parser.add_argument("--scenarios", default="1x20,10x10,50x4,50x4b")
    parser.add_argument("--rounds", type=int, default=1, help="base then new, this many times")
    parser.add_argument(
        "--warm", action="store_true", help="each person's scope searched once before timing"
    )
    parser.add_argument(
        "--background-calls", type=int, default=None, help="llm.background_calls (new code)"
    )
    arguments = parser.parse_args()
    if not (arguments.base / "bot").is_dir():
        raise SystemExit(
            f"{arguments.base} is not a Mnemo worktree: git worktree add {arguments.base} 3844196"
        )
    base_runs: list[list[dict[str, Any]]] = []
    new_runs: list[list[dict[str, Any]]] = []
    options = ["--warm"] if arguments.warm else []
    if arguments.background_calls is not None:
        options += ["--background-calls", str(arguments.background_calls)]
    for _ in range(arguments.rounds):
        for runs, code in ((base_runs, arguments.base), (new_runs, REPOSITORY)):
            runs.append(run_session(code, arguments.facts, arguments.scenarios, options))
    print_table(median_of(base_runs), median_of(new_runs))
    print()
    print_time_table(base_runs[-1], new_runs[-1])
    print()
    for name, runs in (("base", base_runs), ("new", new_runs)):
        for results in runs:
            for row in results:
                for problem in row["problems"]:
                    print(f"{name}, {row['label']}: {problem}")


if __name__ == "__main__":
    main()
