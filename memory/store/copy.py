"""Copying every row of one Mnemo database into another, empty one (``mnemo copy-store``).

Ids are kept, so every reference between rows still holds; self-references are written after
their table, and PostgreSQL's sequences are moved past the copied ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import (
    Column,
    Executable,
    Integer,
    Select,
    Table,
    bindparam,
    func,
    insert,
    select,
    text,
    update,
)

from memory.errors import StoreError
from memory.store import Store, StoreTransaction
from memory.store.schema import Base

# Parents before children; the vectors are copied by the indexes.
COPIED_TABLES = ("facts", "fact_events", "messages", "pending_writes", "store_settings")
BATCH = 2000


@dataclass(frozen=True, slots=True)
class TableCount:
    table: str
    source: int
    target: int


def table(name: str) -> Table:
    return Base.metadata.tables[name]


def self_references(of: Table) -> list[Column[object]]:
    return [
        column
        for column in of.columns
        if any(key.column.table is of for key in column.foreign_keys)
    ]


async def count_rows(store: Store, name: str) -> int:
    query = select(func.count()).select_from(table(name))
    count = await store.read(lambda transaction: transaction.session.scalar(query))
    return int(count or 0)


async def require_empty(store: Store, where: str) -> None:
    for name in COPIED_TABLES:
        if name != "store_settings" and await count_rows(store, name):
            raise StoreError(
                f"{where} already holds {name}: copy only into a new, empty database "
                "(nothing was copied)"
            )


async def copy_rows(source: Store, target: Store) -> list[TableCount]:
    """Every row of :data:`COPIED_TABLES`, in batches; the counts of both sides after."""
    for name in COPIED_TABLES:
        await copy_table(source, target, table(name))
    if target.database.dialect == "postgresql":
        await move_sequences(target)
    return [
        TableCount(name, await count_rows(source, name), await count_rows(target, name))
        for name in COPIED_TABLES
    ]


async def copy_table(source: Store, target: Store, of: Table) -> None:
    later = self_references(of)
    (key,) = of.primary_key.columns
    references: dict[str, list[dict[str, object]]] = {column.name: [] for column in later}
    after: object = None
    while True:
        query = select(of).order_by(key).limit(BATCH)
        if after is not None:
            query = query.where(key > after)
        rows = await source.read(partial(read_rows, query))
        if not rows:
            break
        for column in later:
            references[column.name] += [
                {"row_key": row[key.name], "value": row[column.name]}
                for row in rows
                if row[column.name] is not None
            ]
        copied = [{**row, **{column.name: None for column in later}} for row in rows]
        await target.write(partial(execute, insert(of), copied))
        after = rows[-1][key.name]
    for column in later:
        await restore_references(target, of, column, references[column.name])


def read_rows(query: Select[Any], transaction: StoreTransaction) -> list[dict[str, object]]:
    return [dict(row._mapping) for row in transaction.session.execute(query)]


def execute(
    statement: Executable, rows: list[dict[str, object]], transaction: StoreTransaction
) -> None:
    transaction.session.execute(statement, rows)


async def restore_references(
    target: Store, of: Table, column: Column[object], pointing: list[dict[str, object]]
) -> None:
    """A self-reference (a fact's newer version), once every row it may point at exists."""
    (key,) = of.primary_key.columns
    statement = (
        update(of).where(key == bindparam("row_key")).values({column.name: bindparam("value")})
    )
    for start in range(0, len(pointing), BATCH):
        await target.write(partial(execute, statement, pointing[start : start + BATCH]))


async def move_sequences(target: Store) -> None:
    """PostgreSQL hands out ids from sequences: past the copied ones, so new rows fit."""

    def move(transaction: StoreTransaction) -> None:
        for name in COPIED_TABLES:
            (key,) = table(name).primary_key.columns
            if not key.autoincrement or not isinstance(key.type, Integer):
                continue
            transaction.session.execute(
                text(
                    f"SELECT setval(pg_get_serial_sequence('{name}', '{key.name}'), "
                    f"COALESCE(MAX({key.name}), 1), MAX({key.name}) IS NOT NULL) FROM {name}"
                )
            )

    await target.write(move)
