"""The ``mnemo`` command line: a parser built from small command modules.

Adapters are not imported here (``bot`` does not depend on ``adapters``): the entry point in
``adapters/main.py`` passes the commands that run an adapter in as ``extra_commands``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from bot.cli.base import CliCommand
from bot.cli.calibrate import CalibrateCommand
from bot.cli.compact import CompactCommand
from bot.cli.consolidate import ConsolidateCommand
from bot.cli.copy_store import CopyStoreCommand
from bot.cli.doctor import DoctorCommand
from bot.cli.evaluate import EvaluateCommand
from bot.cli.migrate import MigrateCommand
from bot.cli.reconcile import ReconcileCommand
from bot.cli.termination import until_terminated
from bot.cli.worker import WorkerCommand
from bot.config import ConfigError, load_config
from bot.data_folder import DataFolderError, data_folder_access
from memory.errors import MemoryLayerError

if TYPE_CHECKING:
    from loguru import Message

BUILT_IN_COMMANDS: tuple[CliCommand, ...] = (
    DoctorCommand(),
    MigrateCommand(),
    ReconcileCommand(),
    CompactCommand(),
    ConsolidateCommand(),
    EvaluateCommand(),
    CalibrateCommand(),
    WorkerCommand(),
    CopyStoreCommand(),
)


def build_parser(commands: Sequence[CliCommand]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mnemo", description="A chat bot that remembers each person, privately."
    )
    parser.add_argument("--config", type=Path, help="config file (default: ./mnemo.toml)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in commands:
        command.register(subparsers)
    return parser


def send_loguru_to_logging() -> None:
    """fastembed logs through loguru, which writes to stderr in a format of its own, around
    the console's conversation and outside the log file; its lines join the log instead."""
    from loguru import logger

    logger.remove()
    logger.add(to_logging, level=0, format="{message}")


def to_logging(message: Message) -> None:
    record = message.record
    logging.getLogger(record["name"]).log(record["level"].no, record["message"])


def main(argv: Sequence[str] | None = None, extra_commands: Sequence[CliCommand] = ()) -> int:
    commands = (*extra_commands, *BUILT_IN_COMMANDS)
    arguments = build_parser(commands).parse_args(argv)
    # soft_wrap: an error is one line, whatever the terminal's width.
    errors = Console(stderr=True, soft_wrap=True)
    try:
        config = load_config(arguments.config)
    except ConfigError as error:
        errors.print(f"[red]config error:[/red] {escape(str(error))}", markup=True, highlight=False)
        return 2
    logging.basicConfig(
        level=config.logging.level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # APScheduler logs every job it adds and runs at INFO; ours log the jobs' outcomes.
    logging.getLogger("apscheduler").setLevel(max(logging.WARNING, logging.root.level))
    send_loguru_to_logging()
    command: CliCommand = arguments.handler
    try:
        with data_folder_access(config, command.data_access(arguments)):
            return asyncio.run(until_terminated(command.run(arguments, config)))
    except DataFolderError as error:
        errors.print(f"[red]error:[/red] {escape(str(error))}", markup=True, highlight=False)
        return 2
    except MemoryLayerError as error:
        errors.print(f"[red]error:[/red] {escape(str(error))}", markup=True, highlight=False)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
