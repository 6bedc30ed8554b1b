"""``mnemo reconcile``: make the vector index match SQLite again."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from bot.components import open_memory
from bot.config import Config
from bot.data_folder import DataAccess
from memory.errors import VectorIndexError
from memory.indexing import reconcile


class ReconcileCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "reconcile", help="repair the vector index from the database"
        )
        parser.add_argument("--dry-run", action="store_true", help="only report")
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        dry_run: bool = arguments.dry_run
        memory = await open_memory(config, run_reconcile=False, repair=not dry_run)
        try:
            # The self-healing index replaces broken files first; a dry run reads only.
            healing = memory.healing
            index = healing.current if dry_run and healing is not None else memory.index
            with _progress() as progress:
                task = progress.add_task(f"embedding with {memory.embedder.model_name}")
                report = await reconcile(
                    memory.store,
                    index,
                    memory.embedder,
                    dry_run=dry_run,
                    on_progress=lambda done, total: progress.update(
                        task, completed=done, total=total
                    ),
                )
        except VectorIndexError as error:
            raise VectorIndexError(f"{error}; `mnemo reconcile` rebuilds it") from error
        finally:
            await memory.aclose()
        console = Console()
        for problem in memory.healing.replacements if memory.healing is not None else ():
            console.print(f"rebuilt the unreadable vector index from the database ({problem})")
        verb = "would repair" if dry_run else "repaired"
        console.print(
            f"{verb}: {report.missing} missing, {report.stale} stale, "
            f"{report.reembedded} re-embedded",
            highlight=False,
        )
        return 0


def _progress() -> Progress:
    """A bar while facts are (re-)embedded, say after a change of embedding model."""
    return Progress(
        *Progress.get_default_columns()[:1],
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        transient=True,
    )
