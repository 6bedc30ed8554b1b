"""``mnemo consolidate [--dry-run]``: merge near-duplicate facts now, or show what would be.

The same run the scheduler does (only scopes changed since the last run). An operator
command: it prints fact texts of every scope, on the operator's own terminal.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bot.components import build_language_model, open_memory
from bot.config import Config
from bot.data_folder import DataAccess
from bot.scheduler import consolidation_settings
from memory.consolidation import ConsolidationReport, MergeDecision, Verdict, consolidate

ACTION_NAMES = {
    Verdict.SAME: "merge",
    Verdict.ADDS_DETAIL: "keep detail",
    Verdict.REPLACES: "supersede",
}


class ConsolidateCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "consolidate", help="merge near-duplicate facts (scopes changed since the last run)"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="only print what would be merged"
        )
        parser.add_argument(
            "--no-llm",
            action="store_true",
            help="do not ask the language model: merge only identical (normalised) texts",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        memory = await open_memory(config)
        model = None if arguments.no_llm else build_language_model(config.llm)
        try:
            report = await consolidate(
                memory.store,
                memory.index,
                memory.embedder,
                model,
                consolidation_settings(config),
                dry_run=arguments.dry_run,
            )
        finally:
            if model is not None:
                await model.aclose()
            await memory.aclose()
        print_report(Console(), report)
        return 0


def merge_table(decisions: list[MergeDecision]) -> Table:
    table = Table("owner", "room", "action", "keeps", "retires", "guard")
    for decision in decisions:
        survivor, retired = decision.survivor, decision.retired
        assert survivor is not None and retired is not None
        # Text objects: a fact saying "[bold]" must print as written, not as markup.
        table.add_row(
            Text(survivor.owner),
            Text(survivor.room),
            ACTION_NAMES[decision.verdict],
            Text(f"#{survivor.id} {survivor.text}"),
            Text(f"#{retired.id} {retired.text}"),
            Text(decision.guard or ""),
        )
    return table


def print_report(console: Console, report: ConsolidationReport) -> None:
    merges = report.merges if report.dry_run else report.applied
    verb = "would change" if report.dry_run else "changed"
    console.print(
        f"{report.scopes_visited} scopes with {report.changed_facts} changed facts, "
        f"{report.pairs_proposed} similar pairs: {verb} {len(merges)}",
        highlight=False,
    )
    if merges:
        console.print(merge_table(merges))
    if report.skipped:
        console.print(
            f"{len(report.skipped)} merges skipped (a fact changed meanwhile); next run retries",
            highlight=False,
        )
    if report.failed_batches:
        console.print(
            f"[yellow]the language model gave no usable answer for {report.failed_batches} "
            "batches (see the log); those pairs are judged on the next run[/yellow]"
        )
    if report.left_without_model:
        console.print(
            f"{report.left_without_model} similar pairs left alone: without a language model "
            "only identical texts are merged (similarity alone never merges)",
            highlight=False,
        )
