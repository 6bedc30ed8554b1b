"""``mnemo copy-store --to TARGET``: copy the whole memory to another backend.

From the configured storage (SQLite with LanceDB in ``data_dir``, or PostgreSQL) to TARGET:
a PostgreSQL URL, or a folder that becomes a new SQLite data folder. Everything is copied:
facts with their versions and history, conversation turns, queued writes, settings, and
the vectors (not embedded again). The target must be new and empty; the source is only
read, and held (its data folder's lock) so that no bot changes it meanwhile. Row counts of
both sides are printed, and the command fails if any differ.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import Any

from rich.console import Console
from sqlalchemy import URL, func, make_url, select

from bot.config import Config, StorageSettings
from bot.data_folder import DataAccess, exclusive_data_folder
from memory.copying import CopyReport, VectorSource, copy_memory
from memory.errors import VectorIndexError
from memory.index import LanceFactIndex, VectorIndex
from memory.store import Store, StoreTransaction, sqlite_url
from memory.store.schema import FactVectorRow
from memory.store.vectors import PgVectorIndex

# When the source holds no vector at all: the target index takes the model's dimension at
# the next start (LanceDB rebuilds an index of another dimension; pgvector's has none).
DEFAULT_DIMENSION = 384


def target_location(text: str) -> URL | Path:
    if "://" in text:
        return make_url(StorageSettings(database_url=text).database_url or text)
    return Path(text)


class CopyStoreCommand:
    def data_access(self, arguments: argparse.Namespace) -> DataAccess:
        return DataAccess.WRITE  # the source stays unchanged while it is copied

    def register(self, subparsers: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subparsers.add_parser(
            "copy-store",
            help="copy the whole memory (facts, history, turns, queue, vectors) to a new "
            "PostgreSQL database or SQLite data folder",
        )
        parser.add_argument(
            "--to",
            required=True,
            help="postgresql://user:password@host/name, or a new folder for SQLite",
        )
        parser.set_defaults(handler=self)
        return parser

    async def run(self, arguments: argparse.Namespace, config: Config) -> int:
        console = Console(soft_wrap=True)
        try:
            target = target_location(arguments.to)
        except ValueError as error:
            console.print(f"[red]error:[/red] --to: {error}", markup=True, highlight=False)
            return 2
        if target == config.storage.database or target == config.storage.data_dir:
            console.print("[red]error:[/red] --to names the configured storage itself")
            return 2
        with contextlib.ExitStack() as held:
            if isinstance(target, Path):
                held.enter_context(exclusive_data_folder(target))
            report = await copy_to(config, target)
        print_report(console, report, target)
        return 0 if report.complete else 1


async def copy_to(config: Config, target: URL | Path) -> CopyReport:
    async with contextlib.AsyncExitStack() as stack:
        source = await Store.open(config.storage.database)
        stack.push_async_callback(source.aclose)
        source_index, dimension = await open_source_index(config, source)
        target_store = await Store.open(
            target if isinstance(target, URL) else sqlite_url(target / "mnemo.sqlite3")
        )
        stack.push_async_callback(target_store.aclose)
        target_index = await open_target_index(target, target_store, dimension)
        stack.push_async_callback(target_index.aclose)
        report = await copy_memory(source, source_index, target_store, target_index)
    return report


async def open_source_index(config: Config, source: Store) -> tuple[VectorSource, int]:
    if source.database.dialect == "postgresql":
        dimension = await source.read(vector_dimension)
        return PgVectorIndex(source.database), int(dimension or DEFAULT_DIMENSION)
    index = await LanceFactIndex.open_read_only(config.storage.index_path)
    if index is None:
        raise VectorIndexError(
            f"no vector index in {config.storage.index_path}: run mnemo reconcile first"
        )
    return index, await index.dimension()


def vector_dimension(transaction: StoreTransaction) -> int | None:
    """The dimension of a stored pgvector row; None when there is none."""
    query = select(func.vector_dims(FactVectorRow.embedding)).limit(1)
    dimension: int | None = transaction.session.scalar(query)
    return dimension


async def open_target_index(target: URL | Path, store: Store, dimension: int) -> VectorIndex:
    if isinstance(target, URL):
        return await PgVectorIndex.open(store.database, dimension=dimension)
    return await LanceFactIndex.open(target / "index", dimension=dimension)


def print_report(console: Console, report: CopyReport, target: URL | Path) -> None:
    for count in report.tables:
        mark = "" if count.source == count.target else "  [red]DIFFERS[/red]"
        console.print(f"{count.table}: {count.source} -> {count.target}{mark}", highlight=False)
    console.print(
        f"vectors: {report.vectors_copied} of {report.active_facts} active facts copied"
        + (
            ""
            if report.vectors_copied == report.active_facts
            else " (the others are embedded by reconcile at the next start)"
        ),
        highlight=False,
    )
    where = (
        "storage.database_url = " + target.render_as_string(hide_password=True)
        if isinstance(target, URL)
        else f"storage.data_dir = {target}"
    )
    console.print(f"To use the copy, set {where} (and start the bot).", highlight=False)
