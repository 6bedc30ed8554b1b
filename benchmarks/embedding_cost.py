"""What one embedding model costs: load time, milliseconds per text, resident memory, disk.

    .venv/bin/python -m benchmarks.embedding_cost [--model NAME --model-path DIR] [--texts 64]

The model is loaded as the bot loads it (fastembed, one ONNX thread, the model's prompts).
Then: a query alone (the reply path: one message at a time), a fact alone, and facts in
batches of 8 and 64 (the write path and reconcile), each repeated, in ms per text. Resident
memory is the process's after the model is loaded and used, minus before; disk is the
model folder. Run one model per process, so one model's memory does not count for the next.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

import numpy as np

from bot.components import build_embedder
from bot.config import EmbeddingSettings
from memory.embedding import FastEmbedEmbedder
from tests.conftest import LOCAL_MODEL_DIRECTORY, MODEL_NAME

QUERIES = (
    "What's my sister's name?",
    "Wie heißt mein Hund?",
    "Où est-ce que j'habite ?",
    "Do you remember which film I liked?",
)


def resident_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def folder_mib(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) / 2**20


def facts(count: int, seed: int) -> list[str]:
    return [f"My colleague number {seed + n} plays the violin on Tuesdays" for n in range(count)]


async def per_text(embedder: FastEmbedEmbedder, batch: int, rounds: int, kind: str) -> list[float]:
    times = []
    for round_ in range(rounds):
        texts = [QUERIES[round_ % len(QUERIES)]] if kind == "query" else facts(batch, round_)
        started = time.perf_counter()
        await embedder.embed(texts, "query" if kind == "query" else "document")
        times.append((time.perf_counter() - started) * 1000 / len(texts))
    return times


def line(name: str, values: list[float]) -> str:
    array = np.asarray(values)
    return (
        f"{name:<22} p50 {np.percentile(array, 50):7.1f} ms/text  "
        f"p95 {np.percentile(array, 95):7.1f} ms/text"
    )


async def run(model: str, model_path: Path, texts: int) -> None:
    before = resident_mib()
    embedder = build_embedder(EmbeddingSettings(model=model, model_path=model_path))
    assert isinstance(embedder, FastEmbedEmbedder)
    started = time.perf_counter()
    await embedder.load()
    loaded = time.perf_counter() - started
    await embedder.embed(["warm up"], "query")
    print(f"model {model} from {model_path}: {folder_mib(model_path):.0f} MiB on disk")
    print(f"load {loaded:.1f} s")
    print(line("query alone", await per_text(embedder, 1, 40, "query")))
    print(line("fact alone", await per_text(embedder, 1, 40, "fact")))
    print(line("facts, batches of 8", await per_text(embedder, 8, max(3, texts // 8), "fact")))
    print(line("facts, batches of 64", await per_text(embedder, 64, max(2, texts // 64), "fact")))
    print(f"resident memory +{resident_mib() - before:.0f} MiB")
    await embedder.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default=MODEL_NAME)
    parser.add_argument("--model-path", type=Path, default=LOCAL_MODEL_DIRECTORY)
    parser.add_argument("--texts", type=int, default=256, help="facts embedded per batch size")
    arguments = parser.parse_args()
    asyncio.run(run(arguments.model, arguments.model_path, arguments.texts))


if __name__ == "__main__":
    main()
