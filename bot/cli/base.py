"""The shape of one ``mnemo`` sub-command."""

from __future__ import annotations

import argparse
from typing import Any, Protocol

from bot.config import Config


class CliCommand(Protocol):
    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        """Add the command's parser and set ``handler=self`` on it."""
        ...

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        """Do the work; return the process exit code."""
        ...
