"""``mnemo eval retrieval --dataset locomo PATH``: measure the read path on LoCoMo; and
``mnemo eval memory`` (:mod:`bot.cli.evaluate_memory`): the write path with the LLM."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from bot.cli.evaluate_memory import register_memory, run_memory
from bot.components import build_embedder, build_reranker
from bot.config import Config
from bot.data_folder import DataAccess
from evaluation import (
    ALL_MODES,
    CUTOFFS,
    DatasetError,
    EvalMode,
    load_locomo,
    run_evaluation,
    run_summary,
)

MODE_CHOICES = ("passive", "explicit", "hybrid")


def selected_modes(paths: Sequence[str], scopes: str) -> list[EvalMode]:
    """The modes matching the chosen read paths and scope setting ("both", "joint", "speaker")."""
    wanted_paths = {"passive": (False, False), "explicit": (True, False), "hybrid": (False, True)}
    shapes = {wanted_paths[path] for path in paths}
    return [
        mode
        for mode in ALL_MODES
        if (mode.lookup, mode.hybrid) in shapes
        and (scopes == "both" or mode.speaker_scope == (scopes == "speaker"))
    ]


class EvaluateCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.NONE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "eval", help="measure memory quality: the read path, or the write path with the LLM"
        )
        kinds = parser.add_subparsers(dest="evaluation", metavar="KIND", required=True)
        retrieval = kinds.add_parser(
            "retrieval", help="hit@k, recall@k and MRR of the read path on LoCoMo"
        )
        retrieval.add_argument("--dataset", choices=["locomo"], required=True)
        retrieval.add_argument("path", type=Path, help="locomo10.json")
        retrieval.add_argument("--json", type=Path, metavar="OUT", help="also write numbers here")
        retrieval.add_argument(
            "--modes", nargs="+", choices=MODE_CHOICES, default=list(MODE_CHOICES)
        )
        retrieval.add_argument(
            "--scope",
            choices=["both", "joint", "speaker"],
            default="both",
            help="joint: both speakers' facts visible (the reference); speaker: the asker's only",
        )
        retrieval.add_argument(
            "--conversations", type=int, metavar="N", help="only the first N conversations"
        )
        retrieval.add_argument("--no-reranker", action="store_true", help="skip the cross-encoder")
        retrieval.set_defaults(handler=self)
        register_memory(kinds)
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        if arguments.evaluation == "memory":
            return await run_memory(arguments, config)
        return await self.run_retrieval(arguments, config)

    async def run_retrieval(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console()
        try:
            conversations = load_locomo(arguments.path)[: arguments.conversations]
        except DatasetError as error:
            Console(stderr=True).print(f"[red]dataset error:[/red] {error}", highlight=False)
            return 2
        modes = selected_modes(arguments.modes, arguments.scope)
        embedder = build_embedder(config.embedding)
        reranker = (
            None
            if arguments.no_reranker
            # The eval waits for the reranker's load however long: its numbers depend on it.
            else build_reranker(config.memory, config.embedding, load_wait=None)
        )
        questions = sum(len(conversation.questions) for conversation in conversations)
        console.print(
            f"LoCoMo: {len(conversations)} conversations, {questions} questions "
            f"(categories 1-4 with a relevant observation), model {embedder.model_name}",
            highlight=False,
        )
        try:
            with _progress(console) as progress:
                task = progress.add_task("asking", total=questions * len(modes))
                run = await run_evaluation(
                    conversations,
                    embedder,
                    modes=modes,
                    reranker=reranker,
                    lookup_min_similarity=config.memory.lookup_min_similarity,
                    on_question=lambda: progress.advance(task),
                )
        finally:
            await embedder.aclose()
            if reranker is not None:
                await reranker.aclose()
        summary = {
            "dataset": "locomo",
            "path": str(arguments.path),
            "embedding_model": embedder.model_name,
            "reranker_model": None if reranker is None else config.memory.reranker_model,
            **run_summary(run, modes),
        }
        _print_summary(console, summary)
        if arguments.json is not None:
            arguments.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
            console.print(f"numbers written to {arguments.json}", highlight=False)
        return 0


def _progress(console: Console) -> Progress:
    return Progress(
        *Progress.get_default_columns()[:-1],
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def _numbers(values: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    return [f"{float(values[column]):.3f}" for column in columns]


HITS = [*(f"hit@{k}" for k in CUTOFFS), "mrr"]
RECALLS = [f"recall@{k}" for k in CUTOFFS]


def _overall_table(modes: Mapping[str, Mapping[str, Any]], columns: Sequence[str]) -> Table:
    table = Table(title_justify="left")
    for header in ("path", "scope", "n", *columns):
        table.add_column(header, justify="left" if header in ("path", "scope") else "right")
    for mode in modes.values():
        overall = mode["overall"]
        numbers = _numbers(overall, columns)
        table.add_row(mode["path"], mode["scope"], str(overall["questions"]), *numbers)
    return table


def _category_table(name: str, mode: Mapping[str, Any]) -> Table:
    columns = [*HITS[:-1], "recall@5", "mrr"]
    table = Table(title=name, title_justify="left")
    for header in ("category", "n", *columns):
        table.add_column(header, justify="left" if header == "category" else "right")
    rows = {"all": mode["overall"], **mode["by_category"]}
    for label, numbers in rows.items():
        table.add_row(label, str(numbers["questions"]), *_numbers(numbers, columns))
    return table


def _print_summary(console: Console, summary: Mapping[str, Any]) -> None:
    modes: Mapping[str, Mapping[str, Any]] = summary["modes"]
    console.print("hit@k and MRR (joint: both speakers' facts, as the reference)")
    console.print(_overall_table(modes, HITS))
    console.print("recall@k")
    console.print(_overall_table(modes, RECALLS))
    for name, mode in modes.items():
        console.print(_category_table(name, mode))
    for note in summary["notes"]:
        console.print(f"note: {note}", highlight=False)
