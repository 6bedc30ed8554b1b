"""The shape of one ``mnemo`` sub-command."""

from __future__ import annotations

import argparse
from typing import Any, Protocol

from bot.config import Config
from bot.data_folder import DataAccess


class CliCommand(Protocol):
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        """What this call does with the data folder: WRITE takes its lock (one writing
        process per folder on SQLite); READ_ONLY must open the files read-only and create
        nothing; NONE does not touch it."""
        ...

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        """Add the command's parser and set ``handler=self`` on it."""
        ...

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        """Do the work; return the process exit code."""
        ...
