"""Replies as people see them, against the REAL model of ../shared/llm: how long until the
first text of an answer shows, idle and with other people's messages queued for memory, and
how much of each reply's prompt the server reads again in a ten-turn DM.

    .venv/bin/python -m benchmarks.first_text [--base /work/wt/base0e8] [--size 0.5b]
        [--idle 10] [--queued 6] [--base-url URL] [--saved BASE.json NEW.json]

``MNEMO_TEST_LLAMA_FLAGS="-t 1"`` starts the server with one thread (several times faster
on busy cores); ``--saved`` prints the tables from two children's saved JSON lines.

One llama-server (``../shared/llm/serve.sh``, one slot, the 0.5B or 1.5B model) serves the
code under test and ``--base`` (a worktree of an older commit, e.g. ``git worktree add
/work/wt/base0e8 0e8e50a``), each run in a child process (``first_text_session.py``), base
first, against the same server. Everything is real: the core, SQLite, LanceDB,
all-MiniLM-L6-v2, the console adapter (``ConsoleSession``), the model server. Measured:

- first visible text: from a person's message to the first text of the answer on the
  console (streamed: its first words; not streamed: the whole answer), ``--idle`` questions
  with the write queue empty, and ``--queued`` questions each sent 3 s after ten statements
  of ten other people were queued for memory (``core.catch_up``: learned, not answered), so
  that their extractions are at the server;
- the model's first token of the answer as it passed a recording proxy, and from it to the
  first visible text (streamed answers only);
- a ten-turn DM (statements and questions, 1 s between an answer and the next message, so
  the last message's background calls run between replies): per reply call, llama-server's
  ``timings.prompt_n`` (prompt tokens read) beside ``cache_n`` (kept from its cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parent.parent
SESSION = Path(__file__).resolve().parent / "first_text_session.py"
MODELS = {"0.5b": "qwen2.5-coder-0.5b-instruct", "1.5b": "qwen2.5-coder-1.5b-instruct"}


def run_session(code: Path, base_url: str, model: str, arguments: argparse.Namespace) -> Any:
    command = [
        sys.executable,
        str(SESSION),
        "--code",
        str(code),
        "--base-url",
        base_url,
        "--model",
        model,
        "--idle",
        str(arguments.idle),
        "--queued",
        str(arguments.queued),
    ]
    print(f"running {code} ...", file=sys.stderr, flush=True)
    finished = subprocess.run(
        command, capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": ""}
    )
    sys.stderr.write(finished.stderr[-1500:])
    if finished.returncode != 0:
        raise SystemExit(f"{code} failed")
    return json.loads(finished.stdout.strip().splitlines()[-1])


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{percentile(values, 0.5):,.0f} / {percentile(values, 0.95):,.0f} ms"


def visible(rows: list[dict[str, Any]]) -> list[float]:
    return [row["visible_ms"] for row in rows if row["visible_ms"] is not None]


def after_token(rows: list[dict[str, Any]]) -> list[float]:
    return [
        row["visible_ms"] - row["token_ms"]
        for row in rows
        if row["visible_ms"] is not None and row["token_ms"] is not None
    ]


def print_first_text(results: dict[str, Any]) -> None:
    print("| code | idle p50 / p95 | 10 queued p50 / p95 | queued / idle (p50) | "
          "visible after first token p50 / p95 |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, result in results.items():
        idle, queued = visible(result["idle"]), visible(result["queued"])
        ratio = statistics.median(queued) / statistics.median(idle)
        tokens = after_token(result["idle"] + result["queued"])
        print(f"| {name} | {spread(idle)} | {spread(queued)} | {ratio:.2f}x | {spread(tokens)} |")


def print_reread(results: dict[str, Any]) -> None:
    print("\n| code | turn | " + " | ".join(str(n) for n in range(1, 11)) + " | follow-ups |")
    print("|---|---|" + "---|" * 11)
    for name, result in results.items():
        read = [row["prompt_n"] or 0 for row in result["dm"]]
        whole = [(row["prompt_n"] or 0) + (row["cache_n"] or 0) for row in result["dm"]]
        cells = [f"{r} of {w}" for r, w in zip(read, whole, strict=True)]
        share = sum(read[1:]) / max(1, sum(whole[1:]))
        mean = statistics.mean(read[1:])
        print(
            f"| {name} | read of prompt | " + " | ".join(cells) + f" | {mean:.0f} ({share:.0%}) |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, default=Path("/work/wt/base0e8"))
    parser.add_argument("--size", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--base-url", help="a running llama-server (default: start one)")
    parser.add_argument("--idle", type=int, default=10)
    parser.add_argument("--queued", type=int, default=6)
    parser.add_argument("--saved", type=Path, nargs=2, metavar=("BASE", "NEW"))
    arguments = parser.parse_args()
    if arguments.saved is not None:
        saved = [json.loads(path.read_text().splitlines()[-1]) for path in arguments.saved]
        print_first_text({"base": saved[0], "new": saved[1]})
        print_reread({"base": saved[0], "new": saved[1]})
        return
    if not (arguments.base / "bot").is_dir():
        raise SystemExit(f"{arguments.base} is not a Mnemo worktree: git worktree add it")
    sys.path.insert(0, str(REPOSITORY))
    from tests.servers.llama import LlamaServer

    server = None
    base_url = arguments.base_url
    if base_url is None:
        os.environ["MNEMO_DEV_LLM"] = arguments.size
        server = LlamaServer.start()
        base_url = server.base_url
    try:
        model = MODELS[arguments.size]
        results = {
            "base": run_session(arguments.base, base_url, model, arguments),
            "new": run_session(REPOSITORY, base_url, model, arguments),
        }
    finally:
        if server is not None:
            server.stop()
    print(f"model {model}, load {os.getloadavg()[0]:.1f} at the end\n")
    print_first_text(results)
    print_reread(results)


if __name__ == "__main__":
    main()
