"""``mnemo reconcile``: make the vector index match SQLite again."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from bot.components import open_memory
from bot.config import Config
from memory.indexing import reconcile


class ReconcileCommand:
    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "reconcile", help="repair the vector index from the database"
        )
        parser.add_argument("--dry-run", action="store_true", help="only report")
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        memory = await open_memory(config, run_reconcile=False)
        try:
            report = await reconcile(
                memory.store, memory.index, memory.embedder, dry_run=arguments.dry_run
            )
        finally:
            await memory.aclose()
        verb = "would repair" if arguments.dry_run else "repaired"
        Console().print(
            f"{verb}: {report.missing} missing, {report.stale} stale, "
            f"{report.reembedded} re-embedded",
            highlight=False,
        )
        return 0
