"""``mnemo compact``: give back to the disk every byte the data does not need.

The index is first brought in step with the database (as ``mnemo reconcile``, rebuilding it
if its files are broken), then its live rows are rewritten (deleted rows and old versions
go), and the database is copied anew by ``VACUUM`` (which also switches a database made
before this version to incremental auto-vacuum). Both hold their files while they run: the
command takes the data folder's lock, so it refuses to run beside the bot.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console

from bot.components import open_memory
from bot.config import Config
from bot.data_folder import DataAccess
from memory.index.lance import folder_bytes
from memory.indexing import reconcile
from memory.store import PERSONAL_TABLES
from memory.store.space import vacuum


def _mebibytes(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"


async def _size(folder: Path) -> int:
    return await asyncio.to_thread(lambda: folder_bytes(folder) if folder.is_dir() else 0)


class CompactCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        # The lock keeps a running bot out while the files are rewritten.
        return DataAccess.WRITE

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "compact", help="give the space of deleted data and old index versions back"
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        data_dir = config.storage.data_dir
        before = await _size(data_dir)
        memory = await open_memory(config, run_reconcile=False)
        try:
            await reconcile(memory.store, memory.index, memory.embedder)
            if memory.healing is None:
                # PostgreSQL: the tables are rewritten, each locked while it is.
                await memory.store.database.vacuum(PERSONAL_TABLES, full=True)
                Console().print("PostgreSQL tables rewritten (VACUUM FULL)", highlight=False)
                return 0
            await memory.healing.compact()
            await vacuum(memory.store.database)
        finally:
            await memory.aclose()
        after = await _size(data_dir)
        Console().print(
            f"data folder {data_dir}: {_mebibytes(before)} -> {_mebibytes(after)}",
            highlight=False,
        )
        return 0
