"""``mnemo doctor``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from bot.config import Config
from bot.data_folder import DataAccess, readable_problem
from bot.doctor import Check, CheckResult, CheckStatus, default_checks, run_checks

MARKS = {
    CheckStatus.OK: "[green]ok  [/green]",
    CheckStatus.WARN: "[yellow]warn[/yellow]",
    CheckStatus.FAIL: "[red]FAIL[/red]",
    CheckStatus.SKIP: "[dim]skip[/dim]",
}


def format_line(result: CheckResult) -> str:
    """One line of rich markup; the detail is escaped, since URLs and errors contain [brackets]."""
    return f"{MARKS[result.status]} {result.name}: {escape(result.detail)}"


class DoctorCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.READ_ONLY

    def __init__(self, checks: Callable[[], Sequence[Check]] = default_checks) -> None:
        self._checks = checks

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "doctor",
            help="check config, storage, models, LLM, web search and chat credentials, "
            "with the fix for each problem",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console(soft_wrap=True)
        results = await run_checks(config, self._checks())
        for result in results:
            console.print(format_line(result), highlight=False)
        if readable_problem(config.storage.data_dir) is not None:
            # The same status as every other command that cannot use the data folder.
            return 2
        return 0 if all(result.ok for result in results) else 1
