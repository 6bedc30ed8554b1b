"""``mnemo migrate [--sql]``: bring the database schema up to this version of Mnemo.

The bot does the same at start-up; this command lets an operator do it (and see the
backup's name) before starting, or read the SQL first with ``--sql`` (nothing is changed).
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console

from bot.config import Config
from bot.data_folder import DataAccess
from memory.store.migrations import UpgradeOutcome, describe, upgrade_schema, upgrade_sql


def describe_outcome(where: str, outcome: UpgradeOutcome) -> str:
    before = outcome.before
    if before.is_empty:
        return f"created the database {where} at schema revision {outcome.after}"
    if not outcome.changed:
        return f"the database {where} is at schema revision {outcome.after}: nothing to do"
    recognised = " (made before migrations, recognised by its tables)" if before.legacy else ""
    text = f"upgraded the database {where} from schema revision {before.revision}{recognised}"
    text += f" to {outcome.after}"
    if outcome.backup is not None:
        text += f"; the copy from before is {outcome.backup}"
    return text


class MigrateCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        # --sql only prints the upgrade: it may run beside the bot and creates no file.
        return DataAccess.READ_ONLY if arguments.sql else DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "migrate",
            help="upgrade the database schema (the bot also does it at start-up, after a backup)",
        )
        parser.add_argument(
            "--sql", action="store_true", help="only print the SQL the upgrade would run"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        url = config.storage.database
        console = Console(soft_wrap=True)
        if arguments.sql:
            script = await upgrade_sql(url)
            console.out(script or "-- the schema is current: nothing to do", highlight=False)
            return 0
        outcome = await upgrade_schema(url)
        console.print(describe_outcome(describe(url), outcome), highlight=False)
        return 0
