"""Consolidation time at 1k, 10k and 100k facts, in 100 scopes and in one scope.

    .venv/bin/python -m benchmarks.consolidation [--sizes 1000 10000 100000]
        [--changed 100] [--full-max 10000] [--full-max-per-scope 1000]

Two runs per store size and layout, on real SQLite and LanceDB files:

- incremental: the store was consolidated before, then ``--changed`` new facts arrive (each a
  one-word variant of an existing fact of its scope, so every one finds a pair); this is the
  scheduled run, and its time should follow the changed facts, not the store size;
- full: the first run ever, every fact counts as changed (only up to ``--full-max`` facts
  and ``--full-max-per-scope`` facts per scope, because it is n searches, each scanning its
  scope: that is the point of visiting only what changed).

Vectors come from the ``HashingEmbedder`` test double (384 dimensions, words hashed into
buckets): embedding 100k sentences with a real model would take minutes and measure the model,
not consolidation. The judge is a scripted model that answers instantly, in the judge's schema,
what a real model would: a pair whose texts differ in one word is one thing with a new value
("replaces", so the changed fact supersedes its original), any other pair is two facts
("different"); so the time is ours, not an LLM's: a real local LLM adds roughly one call per
10 pairs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path

from sqlalchemy import insert

from memory.consolidation import ConsolidationSettings, consolidate
from memory.embedding import HashingEmbedder
from memory.index import IndexedFact, LanceFactIndex
from memory.llm import ChatMessage, ScriptedLanguageModel
from memory.records import Fact, FactSource, FactStatus, NewFact
from memory.scope import Scope
from memory.store import Store, StoreTransaction, utc_now
from memory.store.schema import FactRow

DIMENSION = 384
FILL_BATCH = 10_000
SETTINGS = ConsolidationSettings(candidate_threshold=0.5, neighbours=5, batch_size=10)
WORDS = [f"w{number}" for number in range(5_000)]


@dataclass(frozen=True)
class Measurement:
    size: int
    scopes: int
    kind: str
    changed: int
    pairs: int
    merged: int
    llm_calls: int
    seconds: float


def scope_of(number: int) -> Scope:
    return Scope(f"console:user{number}", f"console:room{number}")


def sentence(generator: random.Random) -> str:
    return "I " + " ".join(generator.choice(WORDS) for _ in range(5))


PAIR = re.compile(r"^Pair (\d+)\nA \([^)]*\): (.*)\nB \([^)]*\): (.*)$", re.MULTILINE)


def one_word_changed(older: str, newer: str) -> bool:
    """``newer`` is ``older`` with one word replaced: how ``add_changed`` builds a changed fact."""
    older_words, newer_words = older.split(), newer.split()
    if len(older_words) != len(newer_words):
        return False
    return sum(a != b for a, b in zip(older_words, newer_words, strict=True)) == 1


def judgement(number: int, older: str, newer: str) -> dict[str, object]:
    """A real model's answer for one pair (``judge_prompt.PairJudgement``): a one-word
    variant is a new value of the same thing, anything else two separate facts."""
    if one_word_changed(older, newer):
        return {
            "pair": number,
            "same_thing": True,
            "both_true": False,
            "verdict": "replaces",
            "keep": None,
        }
    return {
        "pair": number,
        "same_thing": False,
        "both_true": True,
        "verdict": "different",
        "keep": None,
    }


def judge(messages: Sequence[ChatMessage]) -> str:
    pairs = PAIR.findall(messages[-1].content)
    verdicts = [judgement(int(number), older, newer) for number, older, newer in pairs]
    return json.dumps({"verdicts": verdicts})


async def fill(store: Store, index: LanceFactIndex, texts: list[str], scopes: int) -> None:
    """Bulk insert, older than the last run, and index with their vectors."""
    embedder = HashingEmbedder(DIMENSION)
    created = utc_now() - timedelta(days=1)
    for start in range(0, len(texts), FILL_BATCH):
        batch = texts[start : start + FILL_BATCH]
        owners = [scope_of((start + offset) % scopes) for offset in range(len(batch))]
        rows = [
            {
                "owner": scope.owner,
                "room": scope.room,
                "text": text,
                "category": "general",
                "status": FactStatus.ACTIVE.value,
                "source": FactSource.STATED.value,
                "created_at": created,
                "embedding_model": embedder.model_name,
            }
            for scope, text in zip(owners, batch, strict=True)
        ]
        ids = await store.write(partial(insert_facts, rows))
        vectors = await embedder.embed(batch)
        await index.upsert(
            [
                IndexedFact(fact_id, scope.owner, scope.room, text, vector, embedder.model_name)
                for fact_id, scope, text, vector in zip(ids, owners, batch, vectors, strict=True)
            ]
        )
    await index.optimize()


def insert_facts(rows: list[dict[str, object]], transaction: StoreTransaction) -> list[int]:
    """The ids of ``rows``, inserted into the facts table in one statement."""
    result = transaction.session.execute(insert(FactRow).returning(FactRow.id), rows)
    return list(result.scalars().all())


async def add_changed(
    store: Store, index: LanceFactIndex, texts: list[str], scopes: int, changed: int
) -> None:
    """``changed`` new facts, each an existing fact of its scope with one word replaced."""
    generator = random.Random(11)
    embedder = HashingEmbedder(DIMENSION)
    variants: list[tuple[Scope, NewFact]] = []
    for _ in range(changed):
        original = generator.randrange(len(texts))
        words = texts[original].split()
        words[generator.randrange(1, len(words))] = generator.choice(WORDS)
        variants.append(
            (scope_of(original % scopes), NewFact(" ".join(words), source=FactSource.STATED))
        )

    def add(transaction: StoreTransaction) -> list[Fact]:
        return [
            transaction.facts.add(scope, new, embedding_model="test/hashing")
            for scope, new in variants
        ]

    facts = await store.write(add)
    vectors = await embedder.embed([fact.text for fact in facts])
    await index.upsert(
        [
            IndexedFact(fact.id, fact.owner, fact.room, fact.text, vector, embedder.model_name)
            for fact, vector in zip(facts, vectors, strict=True)
        ]
    )


async def measure(size: int, scopes: int, kind: str, changed: int) -> Measurement:
    generator = random.Random(7)
    texts = [sentence(generator) for _ in range(size)]
    with tempfile.TemporaryDirectory() as directory:
        store = await Store.open(Path(directory) / "bench.sqlite3")
        index = await LanceFactIndex.open(Path(directory) / "index", dimension=DIMENSION)
        await fill(store, index, texts, scopes)
        if kind == "incremental":
            last_run = (utc_now() - timedelta(hours=1)).isoformat()
            await store.write(
                lambda transaction: transaction.set_setting("consolidation.last_run", last_run)
            )
            await add_changed(store, index, texts, scopes, changed)
        model = ScriptedLanguageModel(fallback=judge)
        started = time.perf_counter()
        report = await consolidate(store, index, HashingEmbedder(DIMENSION), model, SETTINGS)
        seconds = time.perf_counter() - started
        await index.aclose()
        await store.aclose()
    return Measurement(
        size,
        scopes,
        kind,
        report.changed_facts,
        report.pairs_proposed,
        len(report.applied),
        len(model.calls),
        seconds,
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--changed", type=int, default=100)
    parser.add_argument("--full-max", type=int, default=10_000)
    parser.add_argument("--full-max-per-scope", type=int, default=1_000)
    arguments = parser.parse_args()
    print(
        "| facts | scopes | run | changed facts | pairs | merged | LLM calls | time "
        "| per changed fact |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size in arguments.sizes:
        for scopes in (100, 1):
            # A full run is one search per fact, each scanning its scope: only where small.
            small = size <= arguments.full_max and size // scopes <= arguments.full_max_per_scope
            kinds = ["incremental"] + (["full"] if small else [])
            for kind in kinds:
                result = await measure(size, scopes, kind, arguments.changed)
                per_fact = result.seconds / max(result.changed, 1) * 1000
                print(
                    f"| {result.size:,} | {result.scopes} | {result.kind} | {result.changed:,} "
                    f"| {result.pairs:,} | {result.merged:,} | {result.llm_calls:,} "
                    f"| {result.seconds:.2f} s | {per_fact:.1f} ms |",
                    flush=True,
                )


if __name__ == "__main__":
    asyncio.run(main())
