"""``mnemo doctor``."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from bot.config import Config
from bot.doctor import run_checks


class DoctorCommand:
    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "doctor", help="check config, database, index and models, with the fix for each"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console()
        results = await run_checks(config)
        for result in results:
            mark = "[green]ok  [/green]" if result.ok else "[red]FAIL[/red]"
            console.print(f"{mark} {result.name}: {result.detail}", highlight=False)
        return 0 if all(result.ok for result in results) else 1
