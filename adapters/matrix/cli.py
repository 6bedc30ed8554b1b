"""``mnemo matrix``: run the bot on Matrix until stopped."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from rich.console import Console

from adapters.matrix.adapter import MatrixAdapter
from adapters.matrix.errors import MatrixAdapterError, MatrixConfigError
from adapters.matrix.session import log_in
from adapters.matrix.settings import connection_from_settings
from adapters.matrix.streaming import EDIT_INTERVAL_SECONDS
from bot.app import build_application
from bot.config import Config
from bot.data_folder import DataAccess
from bot.health.reporter import reporting_status
from bot.messages import CatchUpBounds

logger = logging.getLogger(__name__)


class MatrixCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "matrix", help="run the bot on Matrix (settings in the [matrix] section)"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        errors = Console(stderr=True)
        try:
            connection = connection_from_settings(config.matrix, config.storage.data_dir)
        except MatrixConfigError as error:
            errors.print(f"[red]config error:[/red] {error}", markup=True, highlight=False)
            return 2
        if not connection.allowed_users.patterns:
            logger.warning(
                "matrix.allowed_users is empty: nobody can invite or talk to the bot "
                '(add patterns such as "@you:example.org" or "@*:example.org")'
            )
        try:
            client = await log_in(connection)
        except MatrixAdapterError as error:
            errors.print(f"[red]Matrix error:[/red] {error}", markup=True, highlight=False)
            return 1
        try:
            application = await build_application(config)
            try:
                adapter = MatrixAdapter(
                    client,
                    application.core,
                    connection.allowed_users,
                    max_message_chars=config.chat.max_message_chars,
                    display_name=config.chat.bot_name,
                    catch_up=CatchUpBounds(
                        config.chat.catch_up_hours, config.chat.catch_up_messages
                    ),
                    stream_interval=(
                        EDIT_INTERVAL_SECONDS if config.chat.streams_on("matrix") else None
                    ),
                )
                await application.start()
                async with reporting_status(application, adapter.connected):
                    await adapter.run()
            finally:
                await application.aclose()
        except MatrixAdapterError as error:
            errors.print(f"[red]Matrix error:[/red] {error}", markup=True, highlight=False)
            return 1
        finally:
            await client.close()
        return 0
