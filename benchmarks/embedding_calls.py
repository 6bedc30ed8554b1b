"""What the embedding model is given under load: texts, model calls, batch sizes, cache hits.

    .venv/bin/python -m benchmarks.embedding_calls --base /work/wt/base0e8 [--facts 1000]
        [--scenarios 50x4,50x4b]

Runs ``benchmarks/load_session.py``'s scenarios (the instant model, ``--facts`` facts per
person) on this tree and on ``--base`` (a worktree of an older commit), each in a child
process, and counts in the embedding batcher of each (wrapped in the child, nothing of the
code under test changed): the texts asked for per call site and lane, how many the cache
served, the model calls and their sizes, the characters the model was given, and the CPU
time of the model calls. Counts do not depend on the machine's load; the CPU time does.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import subprocess
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent


class Counts:
    """What one phase (a scenario) asked of the batcher and what the model was given."""

    def __init__(self) -> None:
        self.asked: Counter[str] = Counter()  # texts per call site and lane
        self.served: Counter[str] = Counter()  # of those, from the cache
        self.calls: Counter[str] = Counter()  # model calls per "lane size"
        self.model_texts = 0
        self.model_chars = 0
        self.model_cpu = 0.0

    def summary(self) -> dict[str, Any]:
        lanes: dict[str, dict[int, int]] = {}
        for key, count in self.calls.items():
            lane, size = key.split(" ")
            lanes.setdefault(lane, {})[int(size)] = count
        return {
            "asked": dict(self.asked),
            "served_by_cache": dict(self.served),
            "model_calls": {lane: sum(sizes.values()) for lane, sizes in lanes.items()},
            "batch_sizes": {lane: dict(sorted(sizes.items())) for lane, sizes in lanes.items()},
            "model_texts": self.model_texts,
            "model_chars": self.model_chars,
            "model_cpu_seconds": round(self.model_cpu, 2),
        }


def call_site() -> str:
    """The first two frames of Mnemo outside the embedding package that asked."""
    names = []
    for frame in reversed(traceback.extract_stack()[:-3]):
        path = frame.filename
        if "/memory/embedding/" in path or "/asyncio/" in path or path.endswith(__file__):
            continue
        if "/memory/" in path or "/bot/" in path:
            names.append(f"{path.rsplit('/', 1)[-1]}:{frame.name}")
        if len(names) == 2:
            break
    return " < ".join(names) or "?"


def wrap_batcher(phases: dict[str, Counts], phase: list[str]) -> None:
    """Count in every ``EmbeddingBatcher`` of the code under test (both versions have
    ``embed(texts, [kind], *, urgent)``, ``_start(batch, urgent)`` and ``_call(batch)``)."""
    from memory.embedding import batching

    batcher: Any = batching.EmbeddingBatcher
    embed, start, call = batcher.embed, batcher._start, batcher._call
    # 0e8e50a's batcher knows no kinds of text.
    has_kinds = "kind" in embed.__code__.co_varnames
    lanes: dict[int, str] = {}

    def counts() -> Counts:
        return phases.setdefault(phase[0], Counts())

    async def counted_embed(self: Any, texts: Any, *args: Any, urgent: bool, **kw: Any) -> Any:
        kind = (args[0] if args else kw.get("kind", "document")) if has_kinds else None
        site = f"{call_site()} [{kind or 'no kind'}, {'reply' if urgent else 'background'}]"
        cached = sum(self._cached(t, *([kind] if has_kinds else [])) is not None for t in texts)
        counts().asked[site] += len(texts)
        counts().served[site] += cached
        return await embed(self, texts, *args, urgent=urgent, **kw)

    def counted_start(self: Any, batch: Any, urgent: bool) -> Any:
        lanes[id(batch)] = "reply" if urgent else "background"
        return start(self, batch, urgent)

    async def counted_call(self: Any, batch: Any) -> Any:
        texts = [text for request in batch for text in request.texts]
        counts().calls[f"{lanes.pop(id(batch), '?')} {len(texts)}"] += 1
        counts().model_texts += len(texts)
        counts().model_chars += sum(len(text) for text in texts)
        return await call(self, batch)

    batcher.embed, batcher._start, batcher._call = counted_embed, counted_start, counted_call


def wrap_model_cpu(phases: dict[str, Counts], phase: list[str]) -> None:
    """The CPU time of the fastembed calls, measured in their worker thread."""
    from memory.embedding import fastembed_backend

    original = asyncio.to_thread

    async def timed_to_thread(function: Any, /, *args: Any, **kwargs: Any) -> Any:
        if getattr(function, "__module__", "") != fastembed_backend.__name__:
            return await original(function, *args, **kwargs)

        def timed() -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                phases.setdefault(phase[0], Counts()).model_cpu += time.thread_time() - started

        return await original(timed)

    asyncio.to_thread = timed_to_thread


def child(code: Path, facts: int, scenarios: str) -> None:
    sys.path.insert(0, str(code.resolve()))
    # This tree's session, whatever ``code`` is (as benchmarks/load.py runs it).
    spec = importlib.util.spec_from_file_location("load_session", HERE / "load_session.py")
    assert spec is not None and spec.loader is not None
    load_session = importlib.util.module_from_spec(spec)
    sys.modules["load_session"] = load_session  # its dataclasses look their module up
    spec.loader.exec_module(load_session)

    phases: dict[str, Counts] = {}
    phase = ["set-up"]
    wrap_batcher(phases, phase)
    wrap_model_cpu(phases, phase)
    session_class: Any = load_session.Session
    run = session_class.run

    async def phased_run(self: Any, number: int, scenario: Any, locked: Any) -> Any:
        phase[0] = "warm-up" if number == 99 else scenario.label
        try:
            return await run(self, number, scenario, locked)
        finally:
            phase[0] = "after"

    session_class.run = phased_run
    parsed = [load_session.Scenario.parse(text) for text in scenarios.split(",")]
    people = max(scenario.people for scenario in parsed)
    asyncio.run(load_session.measure(parsed, people, facts, None))
    labels = [scenario.label for scenario in parsed]
    print(json.dumps({label: phases.get(label, Counts()).summary() for label in labels}))


def run_child(code: Path, facts: int, scenarios: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", "--code", str(code)]
    command += ["--facts", str(facts), "--scenarios", scenarios]
    print(f"running {code} ...", file=sys.stderr, flush=True)
    finished = subprocess.run(command, capture_output=True, text=True, check=False)
    if finished.returncode != 0:
        raise SystemExit(f"{code} failed:\n{finished.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(finished.stdout.strip().splitlines()[-1])
    return result


def print_tables(results: dict[str, dict[str, Any]]) -> None:
    print("| scenario | code | texts asked | from the cache | to the model | characters |", end="")
    print(" model calls (reply / background) | model CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for label in next(iter(results.values())):
        for name, rows in results.items():
            row = rows[label]
            calls = row["model_calls"]
            cells = [label, name, sum(row["asked"].values()), sum(row["served_by_cache"].values())]
            cells += [row["model_texts"], f"{row['model_chars']:,}"]
            cells += [f"{calls.get('reply', 0)} / {calls.get('background', 0)}"]
            cells += [f"{row['model_cpu_seconds']:.1f} s"]
            print("| " + " | ".join(str(cell) for cell in cells) + " |")
    for name, rows in results.items():
        for label, row in rows.items():
            print(f"\n{name}, {label}:")
            for site, asked in row["asked"].items():
                print(f"  {site}: {asked} texts, {row['served_by_cache'][site]} from the cache")
            for lane, sizes in row["batch_sizes"].items():
                print(f"  {lane} calls by size: {sizes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=False)
    parser.add_argument("--facts", type=int, default=1000, help="facts per person")
    parser.add_argument("--scenarios", default="50x4,50x4b")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, default=REPOSITORY, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child(arguments.code, arguments.facts, arguments.scenarios)
        return
    results = {}
    if arguments.base is not None:
        results["base"] = run_child(arguments.base, arguments.facts, arguments.scenarios)
    results["new"] = run_child(REPOSITORY, arguments.facts, arguments.scenarios)
    print_tables(results)


if __name__ == "__main__":
    main()
