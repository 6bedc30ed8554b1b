"""``mnemo worker``: a process that applies queued writes, beside the bot (PostgreSQL)."""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from bot.app import build_application
from bot.config import Config
from bot.data_folder import DataAccess
from bot.worker_process import run_worker

NEEDS_POSTGRES = (
    "mnemo worker needs storage.database_url (PostgreSQL): with SQLite the bot applies its "
    "writes itself, in its one process"
)


class WorkerCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        # With PostgreSQL the data folder holds only the models' cache: no lock is taken.
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "worker",
            help="apply queued writes beside the bot (PostgreSQL; start as many as you like)",
        )
        parser.add_argument(
            "--poll-seconds",
            type=float,
            default=1.0,
            help="how often to look for messages queued by other processes (default 1)",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        if config.storage.database_url is None:
            Console(stderr=True, soft_wrap=True).print(
                f"[red]error:[/red] {NEEDS_POSTGRES}", markup=True, highlight=False
            )
            return 2
        if arguments.poll_seconds <= 0:
            Console(stderr=True, soft_wrap=True).print(
                "[red]error:[/red] --poll-seconds must be above 0", markup=True, highlight=False
            )
            return 2
        application = await build_application(config, apply_queued=True)
        try:
            await run_worker(application, poll_seconds=arguments.poll_seconds)
        finally:
            await application.aclose()
        return 0
