"""``mnemo calibrate [PAIRS.csv]``: measure the candidate threshold for the embedding model."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bot.components import build_embedder
from bot.config import Config
from bot.data_folder import DataAccess
from evaluation.calibration import (
    ACTION_OF_GROUP,
    GroupStats,
    LanguageSeparation,
    PairsFileError,
    ScoredPair,
    by_language,
    closest_calls,
    default_pairs_path,
    describe_overlap,
    describe_recommendation,
    group_stats,
    load_pairs,
    missed_at,
    overlaps,
    recommend_threshold,
    score_pairs,
    write_histogram,
)


class CalibrateCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.NONE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "calibrate", help="measure similarity thresholds on labelled sentence pairs"
        )
        parser.add_argument(
            "pairs",
            type=Path,
            nargs="?",
            help="CSV with group,language,first,second (default: the pairs Mnemo ships)",
        )
        parser.add_argument("--plot", type=Path, metavar="PNG", help="write a histogram here")
        parser.add_argument(
            "--margin",
            type=float,
            default=0.05,
            help="how far below the lowest candidate pair to cut (default 0.05)",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console()
        path: Path = arguments.pairs or default_pairs_path()
        try:
            pairs = load_pairs(path)
        except PairsFileError as error:
            Console(stderr=True).print(f"[red]pairs error:[/red] {error}", highlight=False)
            return 2
        embedder = build_embedder(config.embedding)
        try:
            scored = await score_pairs(pairs, embedder)
        finally:
            await embedder.aclose()
        languages = sorted({pair.language for pair in pairs if pair.language})
        console.print(
            f"{len(pairs)} pairs from {path} ({', '.join(languages)}), model {embedder.model_name}",
            highlight=False,
        )
        console.print(_stats_table(group_stats(scored)))
        for overlap in overlaps(scored):
            console.print(f"- {describe_overlap(overlap)}", highlight=False)
        console.print(_closest_table(closest_calls(scored)))
        console.print(_language_table(by_language(scored)))
        recommendation = recommend_threshold(scored, margin=arguments.margin)
        for line in describe_recommendation(recommendation):
            console.print(line, highlight=False)
        configured = config.memory.candidate_threshold
        missed = missed_at(scored, configured)
        console.print(
            f"configured memory.candidate_threshold = {configured:.2f}: "
            f"{len(missed)} pairs that must be candidates fall below it.",
            highlight=False,
        )
        if arguments.plot is not None:
            title = f"{embedder.model_name}: cosine per group ({len(pairs)} pairs)"
            write_histogram(scored, recommendation.threshold, arguments.plot, title=title)
            console.print(f"histogram written to {arguments.plot}", highlight=False)
        return 0


def _stats_table(stats: list[GroupStats]) -> Table:
    table = Table(title="cosine similarity per group", title_justify="left")
    for column in ("group", "write-path action", "count", "min", "max", "mean"):
        table.add_column(column, justify="left" if column.isalpha() else "right")
    for item in stats:
        table.add_row(
            item.group,
            ACTION_OF_GROUP[item.group],
            str(item.count),
            f"{item.minimum:.2f}",
            f"{item.maximum:.2f}",
            f"{item.mean:.2f}",
        )
    return table


def _language_table(languages: list[LanguageSeparation]) -> Table:
    table = Table(title="per language: unrelated below every candidate?", title_justify="left")
    for column in ("lang", "pairs", "lowest candidate", "highest unrelated", "separated"):
        table.add_column(column, justify="left" if column in ("lang", "separated") else "right")
    for item in languages:
        separated = {True: "yes", False: "NO", None: "-"}[item.separable]
        table.add_row(
            item.language,
            str(item.pairs),
            "-" if item.lowest_candidate is None else f"{item.lowest_candidate:.2f}",
            "-" if item.highest_unrelated is None else f"{item.highest_unrelated:.2f}",
            separated,
        )
    return table


def _closest_table(pairs: list[ScoredPair]) -> Table:
    table = Table(title="the pairs that set the threshold", title_justify="left")
    for column in ("group", "lang", "cosine", "first", "second"):
        table.add_column(column, justify="right" if column == "cosine" else "left")
    for item in pairs:
        pair = item.pair
        table.add_row(pair.group, pair.language, f"{item.similarity:.2f}", pair.first, pair.second)
    return table
