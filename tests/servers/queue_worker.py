"""A ``mnemo worker`` process for the tests and benchmarks, on a PostgreSQL database.

    python -m tests.servers.queue_worker --database-url URL --data-dir DIR
        [--lease SECONDS] [--poll SECONDS] [--stall-first] [--hold-until FILE] [--calls FILE]

The real worker (:func:`bot.worker_process.run_worker` on :func:`bot.app.build_application`
with ``apply_queued``), with the real embedding model; only the LLM is a stand-in that
answers at once as a model following the prompts would (``benchmarks.load_session``'s).
``--stall-first``: the first extraction call never returns, so the process can be killed
while it holds a claim. ``--hold-until``: extraction calls wait until FILE exists (the
test creates it once every worker holds claims, so each has work whatever its start-up
took). ``--calls``: each extraction call is appended to FILE as
``pid<TAB>start<TAB>end<TAB>message``, to check afterwards that one person's messages were
never worked on by two processes at once.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.load_session import MODEL_DIRECTORY, InstantModel
from bot.app import build_application
from bot.config import Config
from bot.worker_process import run_worker


async def until_exists(path: Path) -> None:
    """Polled: another process creates the file, and there is nothing to wait on."""
    while True:
        if await asyncio.to_thread(path.exists):
            return
        await asyncio.sleep(0.05)


class RecordingModel(InstantModel):
    def __init__(self, *, stall_first: bool, hold_until: Path | None, calls: Path | None) -> None:
        super().__init__()
        self._stall = stall_first
        self._hold_until = hold_until
        self._calls = calls

    async def complete(
        self,
        messages: Sequence[Any],
        *,
        kind: Any = None,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        extraction = "facts" in (json_schema or {}).get("properties", {})
        if extraction and self._stall:
            await asyncio.sleep(3600)
        if extraction and self._hold_until is not None:
            await until_exists(self._hold_until)
        started = time.time()
        answer = await super().complete(
            messages, kind=kind, json_schema=json_schema, temperature=temperature
        )
        if extraction and self._calls is not None:
            line = str(messages[-1].content).replace("\n", " ").replace("\t", " ")
            with self._calls.open("a") as file:
                file.write(f"{os.getpid()}\t{started}\t{time.time()}\t{line}\n")
        return answer


def worker_config(database_url: str, data_dir: Path, lease: float) -> Config:
    return Config.model_validate(
        {
            "storage": {
                "data_dir": str(data_dir),
                "database_url": database_url,
                "claim_lease_seconds": lease,
            },
            "embedding": {"model_path": str(MODEL_DIRECTORY)},
            "memory": {"reranker_model": ""},
        }
    )


async def main(arguments: argparse.Namespace) -> None:
    config = worker_config(arguments.database_url, arguments.data_dir, arguments.lease)
    model = RecordingModel(
        stall_first=arguments.stall_first, hold_until=arguments.hold_until, calls=arguments.calls
    )
    application = await build_application(config, llm=model, apply_queued=True)
    try:
        await run_worker(application, poll_seconds=arguments.poll)
    finally:
        await application.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--lease", type=float, default=900.0)
    parser.add_argument("--poll", type=float, default=0.2)
    parser.add_argument("--stall-first", action="store_true")
    parser.add_argument("--hold-until", type=Path)
    parser.add_argument("--calls", type=Path)
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(main(parser.parse_args()))
