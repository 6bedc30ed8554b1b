"""The time the conversation core adds to a reply beyond the LLM call, with 1,000 facts.

    .venv/bin/python -m benchmarks.core_overhead [--facts 1000] [--messages 60]
        [--model NAME --model-path DIR]

One person has ``--facts`` facts in one DM scope (real sentences, embedded with the real
all-MiniLM-L6-v2 and indexed in LanceDB), and two other people have as many each, so the scope
filter has rows to exclude (``--model``: another embedding model, with its prompts). Each
measured message goes through ``core.handle`` exactly as an adapter sends it: addressing, rate
limit, taking the message in (its turn and queue row, in one transaction, before the reply),
recall, reading turns, prompt assembly, the LLM call, and storing the answer. The LLM is an
instant scripted model whose time is measured and subtracted anyway. The queue worker claims the
message once no reply is in progress (replies first), and the queue is drained between
messages, so memory's background work does not compete with the next reply.

Statements take passive recall (top 6); questions take the lookup path (a pool of 50 by
cosine; no cross-encoder, as on a machine without one). Prints p50/p95/max in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import tempfile
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bot.app import Application, build_application
from bot.components import build_embedder
from bot.config import Config
from bot.messages import IncomingMessage
from memory.indexing import index_facts
from memory.llm import CallKind, ChatMessage, ScriptedLanguageModel
from memory.recall.recaller import nothing
from memory.records import NewFact
from memory.scope import Scope
from tests.conftest import LOCAL_MODEL_DIRECTORY, MODEL_NAME

SUBJECTS = ("sister", "neighbour", "colleague", "cousin", "dentist", "landlord", "friend")
THINGS = ("book", "film", "dish", "city", "song", "game", "tea", "sport", "car", "painter")
STATEMENTS = (
    "I had a long day at work today.",
    "My sister is visiting next weekend.",
    "I started learning the violin.",
    "We are painting the kitchen blue.",
)
QUESTIONS = (
    "What's my sister's name?",
    "Which film did I say I liked?",
    "Do you remember where my cousin lives?",
    "What tea do I drink?",
)


class TimedModel:
    """An instant scripted model that also measures the time spent inside it."""

    def __init__(self) -> None:
        self.model = ScriptedLanguageModel(fallback='{"facts": []}')
        self.seconds = 0.0

    @property
    def model_name(self) -> str:
        return "scripted"

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        kind: CallKind = CallKind.REPLY,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float | None = None,
    ) -> str:
        started = time.perf_counter()
        answer = "OK." if json_schema is None else '{"facts": []}'
        await self.model.complete(messages, json_schema=json_schema)
        self.seconds += time.perf_counter() - started
        return answer

    async def aclose(self) -> None:
        return None


def fact_texts(count: int, seed: int) -> list[str]:
    combos = itertools.cycle(itertools.product(SUBJECTS, THINGS))
    texts = []
    for number, (subject, thing) in zip(range(count), combos, strict=False):
        texts.append(f"My {subject}'s favourite {thing} is number {number + seed}")
    return texts


async def fill(application: Application, scope: Scope, count: int, seed: int) -> None:
    texts = fact_texts(count, seed)
    facts = await application.store.write(
        lambda transaction: [transaction.facts.add(scope, NewFact(text)) for text in texts]
    )
    await index_facts(application.index, application.embedder, facts)


def message(text: str, number: int) -> IncomingMessage:
    return IncomingMessage(
        platform="console",
        user_key="console:alice",
        display_name="Alice",
        room_key="console:dm",
        text=text,
        time=datetime(2026, 11, 29, tzinfo=UTC) + timedelta(seconds=number),
        is_direct=True,
        message_id=f"bench-{number}",
    )


async def measure(
    application: Application, model: TimedModel, texts: Sequence[str], offset: int
) -> tuple[list[float], list[float]]:
    """Per message: the milliseconds the core added to the reply, and the CPU milliseconds
    the whole process used meanwhile (what the reply cost, however loaded the machine)."""
    overheads, cpu = [], []
    for number, text in enumerate(texts, offset):
        model.seconds = 0.0
        started, cpu_started = time.perf_counter(), time.process_time()
        await application.core.handle(message(text, number))
        elapsed = time.perf_counter() - started
        cpu.append((time.process_time() - cpu_started) * 1000)
        overheads.append((elapsed - model.seconds) * 1000)
        await application.writer.drain()
    return overheads, cpu


async def measure_recall(application: Application, texts: Sequence[str]) -> list[float]:
    scope = Scope("console:alice", "console:dm")
    durations = []
    for text in texts:
        started = time.perf_counter()
        await application.recaller.for_message_with(scope, text, nothing)
        durations.append((time.perf_counter() - started) * 1000)
    return durations


def report(name: str, values: list[float] | tuple[list[float], list[float]]) -> None:
    wall, cpu = values if isinstance(values, tuple) else (values, None)
    array = np.asarray(wall)
    line = (
        f"{name:<22} n={len(wall):>3}  p50 {np.percentile(array, 50):7.1f} ms  "
        f"p95 {np.percentile(array, 95):7.1f} ms  max {array.max():7.1f} ms"
    )
    if cpu is not None:
        used = np.asarray(cpu)
        line += f"  CPU p50 {np.percentile(used, 50):5.1f} ms"
        line += f"  p95 {np.percentile(used, 95):5.1f} ms"
    print(line)


def benchmark_config(
    directory: str, model: str = MODEL_NAME, model_path: Path = LOCAL_MODEL_DIRECTORY
) -> Config:
    """A data folder in ``directory``, an offline model, no reranker, no rate limit."""
    return Config.model_validate(
        {
            "storage": {"data_dir": str(Path(directory) / "data")},
            "embedding": {"model": model, "model_path": str(model_path)},
            "memory": {"reranker_model": ""},
            "chat": {"rate_limit_per_minute": 100_000},
        }
    )


async def fill_three_people(application: Application, fact_count: int) -> None:
    """``fact_count`` facts each for the speaker (alice's DM) and two others, compacted."""
    await fill(application, Scope("console:alice", "console:dm"), fact_count, 0)
    await fill(application, Scope("console:bob", "console:dm"), fact_count, fact_count)
    await fill(application, Scope("console:carol", "console:room"), fact_count, 2 * fact_count)
    # Compact the freshly appended fragments, as reconcile does at start-up and on schedule.
    await application.index.optimize()


async def run(fact_count: int, messages: int, embedding: str, embedding_path: Path) -> None:
    with tempfile.TemporaryDirectory() as directory:
        model = TimedModel()
        config = benchmark_config(directory, embedding, embedding_path)
        application = await build_application(
            config, llm=model, embedder=build_embedder(config.embedding)
        )
        try:
            started = time.perf_counter()
            await fill_three_people(application, fact_count)
            print(f"filled {3 * fact_count} facts in {time.perf_counter() - started:.1f} s")
            half = messages // 2
            # Warm-up (not reported): first queries load caches in SQLite, LanceDB and ONNX.
            await measure(application, model, [*STATEMENTS, *QUESTIONS] * 3, 0)
            statements = [STATEMENTS[n % len(STATEMENTS)] for n in range(half)]
            questions = [QUESTIONS[n % len(QUESTIONS)] for n in range(half)]
            report("statement (passive)", await measure(application, model, statements, 10))
            report("  recall alone", await measure_recall(application, statements))
            report("question (lookup)", await measure(application, model, questions, 1000))
            report(
                "/memory list",
                await measure(application, model, ["/memory list"] * half, 2000),
            )
        finally:
            await application.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--facts", type=int, default=1000, help="facts in the measured scope")
    parser.add_argument("--messages", type=int, default=60, help="messages measured in all")
    parser.add_argument("--model", default=MODEL_NAME, help="embedding model")
    parser.add_argument("--model-path", type=Path, default=LOCAL_MODEL_DIRECTORY)
    arguments = parser.parse_args()
    asyncio.run(run(arguments.facts, arguments.messages, arguments.model, arguments.model_path))


if __name__ == "__main__":
    main()
