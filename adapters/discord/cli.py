"""``mnemo discord``: run the bot on Discord until stopped."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console

from adapters.discord.access import AccessPolicy
from adapters.discord.client import MnemoDiscordClient, check_token, run_client
from adapters.discord.errors import DiscordSetupError
from bot.app import Application, build_application
from bot.config import Config
from bot.data_folder import DataAccess
from bot.messages import CatchUpBounds

logger = logging.getLogger(__name__)

ApplicationFactory = Callable[[Config], Awaitable[Application]]


class DiscordCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE

    """``build`` makes the application from the config; tests pass one with scripted parts."""

    def __init__(self, build: ApplicationFactory = build_application) -> None:
        self._build = build

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "discord", help="run the bot on Discord (settings in the [discord] section)"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        errors = Console(stderr=True)
        try:
            # Checked before anything is loaded, so a config mistake fails in a second.
            policy = AccessPolicy.from_settings(config.discord)
            token = check_token(config.discord.token)
        except DiscordSetupError as error:
            errors.print(f"[red]config error:[/red] {error}", markup=True, highlight=False)
            return 2
        if policy == AccessPolicy():
            logger.warning(
                "discord.allowed_users, allowed_roles and allowed_channels are empty: anyone "
                "who shares a server with the bot can talk to it"
            )
        application = await self._build(config)
        try:
            await application.start()
            bounds = CatchUpBounds(config.chat.catch_up_hours, config.chat.catch_up_messages)
            client = MnemoDiscordClient(application.core, policy, catch_up=bounds)
            await run_client(client, token)
        except DiscordSetupError as error:
            errors.print(f"[red]Discord error:[/red] {error}", markup=True, highlight=False)
            return 1
        finally:
            await application.aclose()
        return 0
