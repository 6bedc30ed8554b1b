"""``mnemo eval memory`` on the write path of commit 3844196 (before issue 14), for the
before/after table in docs/benchmarks.md. It runs against a worktree of that commit:

    git worktree add ../base 3844196
    PYTHONPATH=../base .venv/bin/python benchmarks/before/eval_memory_3844196.py \\
        --base-url http://127.0.0.1:18435/v1 --model qwen2.5-coder-0.5b-instruct --json OUT

The old code's ``memory`` package comes first on the path; today's dataset, harness types
and scoring are loaded from this checkout by file. The old backends take no call kind, so
the kind is read from the JSON schema's title (for the latency table). Excluded from mypy:
it is typed against the old code.
"""

from __future__ import annotations

import argparse
import asyncio
import enum
import importlib.util
import json
import pickle
import sys
import tempfile
from pathlib import Path

import memory.llm as old_llm
import memory.recall.classifier as old_classifier
import memory.write.pipeline as old_pipeline
from memory.index.lance import LanceFactIndex
from memory.llm.base import LanguageModelUnavailable
from memory.llm.openai_backend import OpenAILanguageModel
from memory.store import Store
from memory.write.errors import UnusableModelOutput
from memory.write.pipeline import PipelineSettings, WriteParts, process_message

HERE = Path(__file__).resolve().parents[2]


class CallKind(enum.StrEnum):  # today's memory.llm.CallKind
    REPLY = "reply"
    EXTRACTION = "extraction"
    DECISION = "decision"
    SEARCH_DECISION = "search_decision"
    JUDGE = "judge"


class AnswerCut(Exception):  # the old backends never raise it
    pass


old_llm.CallKind = CallKind
old_llm.AnswerCut = AnswerCut
old_classifier.question_words = old_classifier._question_words
# Today's harness imports plan_message; its process is replaced by the old one below.
old_pipeline.plan_message = None


def load(name, relative):
    spec = importlib.util.spec_from_file_location(name, HERE / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# Today's grounding.plain is what scoring compares words with.
load("memory.write.grounding_today", "memory/write/grounding.py")
sys.modules["memory.write.grounding"] = sys.modules["memory.write.grounding_today"]
cases = load("memory.evaluation.memory_cases", "memory/evaluation/memory_cases.py")
measured = load("memory.evaluation.measured_model", "memory/evaluation/measured_model.py")
harness = load("memory.evaluation.memory_harness", "memory/evaluation/memory_harness.py")
scoring = load("memory.evaluation.memory_scoring", "memory/evaluation/memory_scoring.py")
harness.process = process_message  # the old pipeline plans and commits in one function
SCHEMA_KINDS = {"ExtractionResponse": CallKind.EXTRACTION, "DecisionResponse": CallKind.DECISION}


class Kindless:
    """Today's wrapper passes ``kind``; the old backend does not take it."""

    def __init__(self, inner):
        self.inner, self.model_name = inner, inner.model_name

    async def complete(self, messages, *, kind=None, json_schema=None, temperature=None):
        try:
            return await self.inner.complete(
                messages, json_schema=json_schema, temperature=temperature
            )
        except LanguageModelUnavailable as error:
            # The old code sends no token budget: a runaway answer runs into the timeout (and
            # the write would be retried for ever). Counted as an unusable answer, not a stop.
            if "did not answer in time" not in str(error):
                raise
            raise UnusableModelOutput("model", "runaway answer: timeout", "") from error

    async def aclose(self):
        await self.inner.aclose()


class KindFromSchema:
    """The old pipeline passes no kind: take it from the schema's title."""

    def __init__(self, inner):
        self.inner, self.model_name = inner, inner.model_name

    async def complete(self, messages, *, json_schema=None, temperature=None):
        kind = SCHEMA_KINDS.get((json_schema or {}).get("title"), CallKind.REPLY)
        return await self.inner.complete(
            messages, kind=kind, json_schema=json_schema, temperature=temperature
        )


async def main(arguments):
    dataset = cases.load_memory_cases(HERE / "memory/evaluation/memory_cases.json")
    chosen = dataset.conversations[arguments.offset :: arguments.every][: arguments.limit]
    dataset = dataset.model_copy(update={"conversations": chosen})
    # The old code's embedder, on the offline model copy beside the project (as the tests
    # use it); today's tests.conftest imports modules the old code has not.
    from memory.embedding.fastembed_backend import FastEmbedEmbedder

    model_path = HERE.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
    embedder = FastEmbedEmbedder("sentence-transformers/all-MiniLM-L6-v2", model_path=model_path)
    backend = OpenAILanguageModel(arguments.model, base_url=arguments.base_url, timeout=900)
    model = measured.MeasuredModel(Kindless(backend))
    run = harness.MemoryEvalRun(f"{arguments.model} (3844196)", log=model.log)
    with tempfile.TemporaryDirectory() as folder:
        store = await Store.open(Path(folder) / "mnemo.sqlite3")
        index = await LanceFactIndex.open(Path(folder) / "index", dimension=384)
        settings = PipelineSettings(0.30, 5, 3)
        parts = WriteParts(store, index, embedder, KindFromSchema(model), settings)
        for conversation in dataset.conversations:
            result = await harness.run_conversation(parts, model, dataset, conversation)
            run.results.append(result)
            print(conversation.id, [turn.actions for turn in result.turns], flush=True)
        await index.aclose()
        await store.aclose()
    await backend.aclose()
    # Plain dicts: the log's defaultdicts cannot be pickled. The run, for --merge.
    run.log.seconds, run.log.cut = dict(run.log.seconds), dict(run.log.cut)
    Path(arguments.json).with_suffix(".pickle").write_bytes(pickle.dumps(run))
    return scoring.memory_summary(run)


def merged(paths):
    """Runs of disjoint parts of the dataset (``--offset``), as one run."""
    runs = [pickle.loads(Path(path).read_bytes()) for path in paths]
    whole = harness.MemoryEvalRun(runs[0].model)
    for part in runs:
        whole.results.extend(part.results)
        for kind, seconds in part.log.seconds.items():
            whole.log.seconds[kind].extend(seconds)
        for kind, count in part.log.cut.items():
            whole.log.cut[kind] += count
    return scoring.memory_summary(whole)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--json", required=True)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--offset", type=int, default=0, help="start at this conversation")
    parser.add_argument("--merge", nargs="+", help="the .pickle files of earlier parts")
    options = parser.parse_args()
    summary = merged(options.merge) if options.merge else asyncio.run(main(options))
    Path(options.json).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(summary["overall"], indent=2))
