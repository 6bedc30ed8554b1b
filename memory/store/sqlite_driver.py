"""aiosqlite as SQLAlchemy drives it, with one trip to the connection's thread per statement.

SQLAlchemy's aiosqlite adapter sends each statement to the connection's thread four times
(make a cursor, execute, fetch the rows, close the cursor), and each trip wakes the event
loop. This cursor does all four in one function on that thread, so a statement costs one
wake-up: under load the event loop's time per reply was mostly these trips
(docs/benchmarks.md, "Load"). Everything else is SQLAlchemy's aiosqlite dialect unchanged;
the engine gets this module through ``create_async_engine(..., module=...)``.

Server-side cursors (``stream``) keep SQLAlchemy's own cursor: they fetch in parts.
"""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT

# What one statement left: its columns, its rows, the rows it changed, the last row id.
Outcome = tuple[Any, list[Any], int, int | None]


def _execute(connection: sqlite3.Connection, operation: str, parameters: Any) -> Outcome:
    """Runs on the connection's own thread."""
    cursor = connection.cursor()
    try:
        if parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        # After the rows: SQLite counts the rows of an UPDATE ... RETURNING as they are read.
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


def _execute_many(
    connection: sqlite3.Connection, operation: str, parameters: Sequence[Any]
) -> Outcome:
    cursor = connection.cursor()
    try:
        cursor.executemany(operation, parameters)
        return None, [], cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneTripCursor(AsyncAdapt_aiosqlite_cursor):
    """A DBAPI cursor whose ``execute`` is one call on the connection's thread; the rows,
    the description and the counts come back with it (no sqlite3 cursor stays open)."""

    __slots__ = ("_arraysize", "_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        # Not the parent's __init__: it opens an aiosqlite cursor, one trip more.
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._rows = collections.deque()
        self._soft_closed_memoized = EMPTY_DICT
        self._arraysize = 1
        self._description: Any = None
        self._rowcount = -1
        self._lastrowid: int | None = None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> int:
        return self._lastrowid  # type: ignore[return-value]  # DBAPI: None before an insert

    @property
    def arraysize(self) -> int:
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._arraysize = value

    async def _async_soft_close(self) -> None:
        """Nothing is open on the connection's thread."""

    def close(self) -> None:
        self._rows.clear()

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        async with self._adapt_connection._execute_mutex:
            outcome = await self._on_thread(_execute, operation, parameters)
        self._keep(outcome)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        async with self._adapt_connection._execute_mutex:
            outcome = await self._on_thread(_execute_many, operation, seq_of_parameters)
        self._keep(outcome)

    async def _on_thread(self, function: Any, operation: Any, parameters: Any) -> Outcome:
        connection: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        # aiosqlite's own Cursor sends its calls the same way.
        send: Callable[..., Awaitable[Outcome]] = connection._execute
        return await send(function, connection._conn, operation, parameters)

    def _keep(self, outcome: Outcome) -> None:
        description, rows, rowcount, lastrowid = outcome
        self._description = description
        self._rows = collections.deque(rows)
        self._rowcount = rowcount
        self._lastrowid = lastrowid

    def nextset(self) -> None:
        raise NotImplementedError("SQLite returns one result set per statement")

    def setinputsizes(self, *inputsizes: Any) -> None:
        """Nothing to do for SQLite (DBAPI allows a no-op)."""


class OneTripConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneTripCursor


class OneTripDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """SQLAlchemy's adapted aiosqlite module, handing out :class:`OneTripConnection`."""

    def connect(self, *arg: Any, **kw: Any) -> OneTripConnection:
        adapted = super().connect(*arg, **kw)
        return OneTripConnection(self, adapted._connection)


def one_trip_dbapi() -> OneTripDBAPI:
    return OneTripDBAPI(aiosqlite, sqlite3)
