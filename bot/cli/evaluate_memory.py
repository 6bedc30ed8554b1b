"""``mnemo eval memory``: the configured LLM on the real write path, over labelled chats.

Prints the end-state accuracy, invented and missed facts, guards fired and model calls per
message, overall, per case kind and per language, and each call kind's latency. With
``--reference`` the dataset's own labels answer instead of the LLM: that run must score
100%, so it checks the dataset and the code, not a model.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress
from rich.table import Table
from rich.text import Text

from bot.components import build_embedder, build_language_model
from bot.config import Config
from evaluation.memory_cases import CaseError, Dataset, load_memory_cases
from evaluation.memory_harness import run_memory_evaluation
from evaluation.memory_scoring import memory_summary
from evaluation.reference_model import ReferenceModel
from memory.llm import LanguageModel, LanguageModelError
from memory.write.pipeline import PipelineSettings

# n: conversations, msgs: messages, ok: end state as labelled, inv/msg: invented facts per
# message, miss: expected facts missing, unus.: unusable model answers, guards: guards fired.
COLUMNS = ("n", "msgs", "ok", "inv/msg", "miss", "unus.", "calls/msg", "guards")
# Shortcuts that spare a model call are not a guard stopping a mistake.
SHORTCUTS = ("no_candidates", "normalised_duplicate")


def register_memory(kinds: Any) -> None:
    memory = kinds.add_parser(
        "memory", help="end-state accuracy of the write path with the configured LLM"
    )
    memory.add_argument("--dataset", type=Path, metavar="PATH", help="default: the shipped one")
    memory.add_argument("--json", type=Path, metavar="OUT", help="also write the numbers here")
    memory.add_argument(
        "--reference", action="store_true", help="answer from the labels (must score 100%%)"
    )
    memory.add_argument("--kinds", nargs="+", metavar="KIND", help="only these case kinds")
    memory.add_argument("--limit", type=int, metavar="N", help="only the first N conversations")
    memory.add_argument(
        "--every", type=int, default=1, metavar="K", help="only every K-th (a sample of all kinds)"
    )
    memory.add_argument("--seed", type=int, default=0, help="the LLM's sampling seed")


def selected(dataset: Dataset, arguments: argparse.Namespace) -> Dataset:
    chosen = [
        conversation
        for conversation in dataset.conversations
        if not arguments.kinds or conversation.kind in arguments.kinds
    ][:: arguments.every][: arguments.limit]
    return dataset.model_copy(update={"conversations": tuple(chosen)})


def model_for(arguments: argparse.Namespace, config: Config, dataset: Dataset) -> LanguageModel:
    if arguments.reference:
        return ReferenceModel(dataset)
    settings = config.llm.model_copy(update={"seed": arguments.seed})
    return build_language_model(settings)


async def run_memory(arguments: argparse.Namespace, config: Config) -> int:
    console, errors = Console(), Console(stderr=True)
    try:
        dataset = selected(load_memory_cases(arguments.dataset), arguments)
        llm = model_for(arguments, config, dataset)
    except CaseError as error:
        errors.print(f"[red]dataset error:[/red] {error}", highlight=False)
        return 2
    embedder = build_embedder(config.embedding)
    settings = PipelineSettings(
        config.memory.candidate_threshold,
        config.memory.candidate_limit,
        config.memory.max_destructive_actions,
        config.memory.decide_in_extraction,
    )
    console.print(
        f"{len(dataset.conversations)} conversations, model {llm.model_name}, embedding "
        f"{embedder.model_name}, candidate threshold {settings.candidate_threshold}",
        highlight=False,
    )
    try:
        with Progress(*Progress.get_default_columns()[:-1], BarColumn(), MofNCompleteColumn(),
                      console=console, transient=True) as progress:  # fmt: skip
            task = progress.add_task("conversations", total=len(dataset.conversations))
            run = await run_memory_evaluation(
                dataset, llm, embedder, settings, on_conversation=lambda _: progress.advance(task)
            )
    except LanguageModelError as error:
        errors.print(f"[red]the language model failed:[/red] {error}", highlight=False)
        return 1
    finally:
        await llm.aclose()
        await embedder.aclose()
    summary = memory_summary(run)
    print_summary(console, summary)
    if arguments.json is not None:
        arguments.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        console.print(f"numbers written to {arguments.json}", highlight=False)
    return 0


def row(name: str, numbers: Mapping[str, Any]) -> list[str]:
    guards = sum(count for guard, count in numbers["guards"].items() if guard not in SHORTCUTS)
    return [
        name,
        str(numbers["conversations"]),
        str(numbers["messages"]),
        f"{numbers['accuracy']:.0%}",
        f"{numbers['invented_per_message']:.2f}",
        str(numbers["missed"]),
        str(numbers["unusable_answers"]),
        f"{numbers['calls_per_message']:.2f}",
        str(guards),
    ]


def numbers_table(title: str, first: str, groups: Mapping[str, Mapping[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for header in (first, *COLUMNS):
        table.add_column(header, justify="left" if header == first else "right")
    for name, numbers in groups.items():
        table.add_row(*row(name, numbers))
    return table


def latency_table(latency: Mapping[str, Mapping[str, float]]) -> Table:
    table = Table(title="model calls", title_justify="left")
    for header in ("call kind", "calls", "cut", "p50 s", "p95 s"):
        table.add_column(header, justify="left" if header == "call kind" else "right")
    for kind, numbers in latency.items():
        table.add_row(
            kind,
            str(int(numbers["calls"])),
            str(int(numbers["cut"])),
            f"{numbers['p50_seconds']:.2f}",
            f"{numbers['p95_seconds']:.2f}",
        )
    return table


def counts_line(title: str, counts: Mapping[str, int]) -> Text:
    """``title: name count, ...`` for the names counted at least once, or ``none``."""
    counted = ", ".join(f"{name} {count}" for name, count in counts.items() if count)
    return Text(f"{title}: {counted or 'none'}")


def print_summary(console: Console, summary: Mapping[str, Any]) -> None:
    console.print(numbers_table("overall", "", {"all": summary["overall"]}))
    console.print(numbers_table("by case kind", "kind", summary["by_kind"]))
    console.print(numbers_table("by language", "language", summary["by_language"]))
    console.print(latency_table(summary["latency"]))
    translated = {name: n["translated"] for name, n in summary["by_language"].items()}
    console.print(counts_line("facts kept in English from another language", translated))
    for case, facts in summary["translated"].items():
        console.print(f"in English in {case}: {'; '.join(map(repr, facts))}", highlight=False)
    console.print(counts_line("guards and shortcuts", summary["overall"]["guards"]))
    for case, problems in summary["failures"].items():
        console.print(f"failed {case}: {'; '.join(problems)}", highlight=False)
