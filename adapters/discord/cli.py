"""``mnemo discord``: run the bot on Discord until stopped."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console

from adapters.discord.access import AccessPolicy
from adapters.discord.client import Shards, build_client, check_token, run_client
from adapters.discord.errors import DiscordSetupError
from adapters.discord.streaming import EDIT_INTERVAL_SECONDS
from bot.app import Application, build_application
from bot.config import Config
from bot.data_folder import DataAccess
from bot.health.reporter import reporting_status
from bot.messages import CatchUpBounds

logger = logging.getLogger(__name__)

ApplicationFactory = Callable[[Config], Awaitable[Application]]


def shard_ids(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of shard numbers such as 0,1"
        ) from None


def shards_from(arguments: argparse.Namespace) -> Shards | None:
    ids: tuple[int, ...] | None = getattr(arguments, "shard_ids", None)
    count: int | None = getattr(arguments, "shard_count", None)
    if ids is None and count is None:
        return None
    if ids is None or count is None:
        raise DiscordSetupError("--shard-ids and --shard-count go together")
    return Shards(ids, count)


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
        parser.add_argument(
            "--shard-ids",
            type=shard_ids,
            help="run only these shards in this process, e.g. 0,1 (with --shard-count; "
            "other processes run the rest, on the same PostgreSQL database)",
        )
        parser.add_argument(
            "--shard-count", type=int, help="how many shards the bot has in all, e.g. 4"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        errors = Console(stderr=True)
        try:
            # Checked before anything is loaded, so a config mistake fails in a second.
            policy = AccessPolicy.from_settings(config.discord)
            token = check_token(config.discord.token)
            shards = shards_from(arguments)
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
            interval = EDIT_INTERVAL_SECONDS if config.chat.streams_on("discord") else None
            client = build_client(
                application.core, policy, shards, catch_up=bounds, stream_interval=interval
            )

            def connected() -> bool:
                return client.is_ready() and not client.is_closed()

            async with reporting_status(application, connected):
                await run_client(client, token)
        except DiscordSetupError as error:
            errors.print(f"[red]Discord error:[/red] {error}", markup=True, highlight=False)
            return 1
        finally:
            await application.aclose()
        return 0
