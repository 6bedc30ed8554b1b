"""Scope filters for LanceDB ``where`` clauses, safe against whatever a user id contains:
the index filters on a hex digest of each key, and quotes it as a literal all the same.
"""

from __future__ import annotations

import hashlib

from memory.scope import Scope

_HEX = frozenset("0123456789abcdef")


def key_digest(key: str) -> str:
    """A stable 32-hex-digit digest of a user or room key."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=16).hexdigest()


def sql_string_literal(value: str) -> str:
    """Quote ``value`` as a SQL string literal (single quotes doubled)."""
    if "\x00" in value:
        raise ValueError("NUL byte in a filter value")
    return "'" + value.replace("'", "''") + "'"


def _digest_literal(key: str) -> str:
    digest = key_digest(key)
    assert set(digest) <= _HEX
    return sql_string_literal(digest)


def scope_where(scope: Scope) -> str:
    """The ``where`` clause selecting the rows visible in ``scope``."""
    rooms = scope.visible_rooms()
    clauses = [f"owner_digest = {_digest_literal(scope.owner)}"]
    if rooms.only is not None:
        clauses.append(f"room_digest = {_digest_literal(rooms.only)}")
    if rooms.exclude is not None:
        clauses.append(f"room_digest != {_digest_literal(rooms.exclude)}")
    return " AND ".join(clauses)


def model_where(model: str) -> str:
    """The ``where`` clause selecting the rows embedded by ``model``."""
    return f"model = {sql_string_literal(model)}"


def ids_where(fact_ids: list[int]) -> str:
    return "fact_id IN (" + ", ".join(str(int(i)) for i in fact_ids) + ")"
