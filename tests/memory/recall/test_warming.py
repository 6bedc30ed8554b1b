"""Warming the scope cache at start: the last speakers' own scopes, the most recent kept
longest when the cache's bound cannot hold them all (issue 16). Real SQLite and LanceDB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.index import IndexedFact, LanceFactIndex
from memory.recall.warming import warm_recent_speakers
from memory.records import Role
from memory.scope import Scope, ScopeMode
from memory.store import Store

DIMENSION = 8
SPOKE = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


async def test_the_most_recent_speakers_stay_in_memory_within_its_bound(
    sqlite_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = await LanceFactIndex.open(tmp_path / "index", dimension=DIMENSION, scope_cache_rows=20)
    people = ["console:ann", "console:ben", "console:cy"]  # cy spoke last, ann first
    rows = []
    for number, person in enumerate(people):
        for k in range(10):
            vector = np.random.default_rng(number * 10 + k).standard_normal(DIMENSION, np.float32)
            rows.append(IndexedFact(number * 10 + k + 1, person, "console:dm", "f", vector, "m"))
        async with sqlite_store.transaction() as transaction:
            await transaction.turns.add(
                "console:dm",
                Role.USER,
                "hello",
                author=person,
                created_at=SPOKE + timedelta(minutes=number),
            )
            # The bot's answer is not a speaker of its own.
            await transaction.turns.add(
                "console:dm", Role.ASSISTANT, "hi", author=person, created_at=SPOKE
            )
    await index.upsert(rows)

    warmed = await warm_recent_speakers(sqlite_store, index, ScopeMode.USER_ROOM)
    assert warmed == 3  # each loaded; the bound of 20 rows keeps two of them

    loads: list[str] = []
    load = index._scope_rows

    async def counted(scope: Scope, limit: int) -> Any:
        loads.append(scope.owner)
        return await load(scope, limit)

    monkeypatch.setattr(index, "_scope_rows", counted)
    for person in reversed(people):
        hits = await index.search(Scope(person, "console:dm"), rows[0].vector, limit=3)
        assert {(hit.fact_id - 1) // 10 for hit in hits} == {people.index(person)}
    assert loads == ["console:ann"]  # ben and cy were in memory
    await index.aclose()
