"""The ``mnemo`` entry point: the outermost layer, so it may hand adapters to the CLI."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from adapters.console import ChatCommand
from adapters.discord.cli import DiscordCommand
from adapters.matrix.cli import MatrixCommand
from bot.cli import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(argv, extra_commands=(ChatCommand(), MatrixCommand(), DiscordCommand()))


if __name__ == "__main__":
    sys.exit(main())
