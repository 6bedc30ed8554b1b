"""``mnemo eval retrieval --dataset locomo PATH``: measure the read path on LoCoMo."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn
from rich.table import Table

from bot.components import build_embedder, build_reranker
from bot.config import Config
from memory.evaluation import (
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
    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "eval", help="measure memory quality on a public dataset"
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
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console()
        try:
            conversations = load_locomo(arguments.path)[: arguments.conversations]
        except DatasetError as error:
            Console(stderr=True).print(f"[red]dataset error:[/red] {error}", highlight=False)
            return 2
        modes = selected_modes(arguments.modes, arguments.scope)
        embedder = build_embedder(config.embedding)
        reranker = (
            None if arguments.no_reranker else build_reranker(config.memory, config.embedding)
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
            **run_summary(run),
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


def _metric_columns() -> list[str]:
    return [f"hit@{k}" for k in CUTOFFS] + [f"recall@{k}" for k in CUTOFFS] + ["mrr"]


def _table(title: str, rows: Mapping[str, Mapping[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("")
    table.add_column("n", justify="right")
    for column in _metric_columns():
        table.add_column(column.upper() if column == "mrr" else column, justify="right")
    for label, numbers in rows.items():
        values = [f"{float(numbers[column]):.3f}" for column in _metric_columns()]
        table.add_row(label, str(numbers["questions"]), *values)
    return table


def _print_summary(console: Console, summary: Mapping[str, Any]) -> None:
    modes: Mapping[str, Mapping[str, Any]] = summary["modes"]
    console.print(_table("overall", {name: mode["overall"] for name, mode in modes.items()}))
    for name, mode in modes.items():
        console.print(_table(name, {"all": mode["overall"], **mode["by_category"]}))
    for note in summary["notes"]:
        console.print(f"note: {note}", highlight=False)
