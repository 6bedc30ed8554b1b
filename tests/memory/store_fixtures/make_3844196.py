"""Makes ``mnemo-3844196.sqlite3``: a database as Mnemo at commit 3844196 made it.

That commit made its tables with ``create_all`` (no Alembic), so this file is what every
install before migrations has on disk. Run it with that commit's code, never with today's:

    git worktree add /tmp/mnemo-3844196 3844196
    PYTHONPATH=/tmp/mnemo-3844196 .venv/bin/python tests/memory/store_fixtures/make_3844196.py

It is excluded from mypy (it type-checks against the old code, not the current one).
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.records import Action, Actor, FactSource, FactStatus, NewFact, Role
from memory.scope import Scope
from memory.store import EventDraft, Store

TARGET = Path(__file__).with_name("mnemo-3844196.sqlite3")
ALICE_ROOM = Scope("matrix:@alice:example.org", "matrix:!room1:example.org")
ALICE_DM = Scope("matrix:@alice:example.org", "matrix:dm")
BOB_ROOM = Scope("discord:81234567890", "discord:4455")
START = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)


async def fill(store: Store) -> None:
    async with store.transaction() as transaction:
        facts = transaction.facts
        paris = await facts.add(
            ALICE_ROOM,
            NewFact("I live in Paris", "location", FactSource.STATED, START, "$event1"),
            embedding_model="sentence-transformers/all-MiniLM-L6-v2",
        )
        berlin = await facts.add(
            ALICE_ROOM,
            NewFact("I live in Berlin now", "location", FactSource.EXTRACTED, None, "$event2"),
            embedding_model="sentence-transformers/all-MiniLM-L6-v2",
        )
        await facts.set_status(
            ALICE_ROOM,
            paris.id,
            FactStatus.SUPERSEDED,
            superseded_by=berlin.id,
            valid_to=START + timedelta(days=3),
        )
        await facts.record_event(
            ALICE_ROOM,
            EventDraft(
                Action.UPDATE,
                Actor.PIPELINE,
                berlin.id,
                paris.id,
                "UPDATE",
                "1",
                old_text=paris.text,
                new_text=berlin.text,
            ),
        )
        chess = await facts.add(ALICE_ROOM, NewFact("I play chess on Sundays", "hobby"))
        await facts.set_status(ALICE_ROOM, chess.id, FactStatus.DELETED)
        await facts.record_event(
            ALICE_ROOM,
            EventDraft(
                Action.DELETE,
                Actor.PIPELINE,
                chess.id,
                None,
                "DELETE",
                "2",
                old_text=chess.text,
            ),
        )
        tea = await facts.add(ALICE_DM, NewFact("I prefer tea over coffee", "preference"))
        tea_again = await facts.add(ALICE_DM, NewFact("I like tea more than coffee", "preference"))
        await facts.set_status(ALICE_DM, tea_again.id, FactStatus.MERGED, superseded_by=tea.id)
        merge = await facts.record_event(
            ALICE_DM,
            EventDraft(
                Action.MERGE,
                Actor.CONSOLIDATION,
                tea.id,
                tea_again.id,
                guard=None,
                old_text=tea_again.text,
                new_text=tea.text,
            ),
        )
        await facts.mark_undone(ALICE_DM, merge.id)
        await facts.record_event(
            ALICE_DM,
            EventDraft(
                Action.NONE,
                Actor.PIPELINE,
                None,
                None,
                "UPDATE",
                "7",
                guard="target_not_shown",
                new_text="I like tea",
            ),
        )
        cat = NewFact("私の猫の名前はミケです 🐈", "pet", FactSource.REMEMBERED)
        await facts.add(ALICE_DM, cat)
        forgotten = await facts.add(BOB_ROOM, NewFact("My PIN is 0000"))
        await facts.erase(BOB_ROOM, forgotten.id)
        await facts.record_event(BOB_ROOM, EventDraft(Action.FORGET, Actor.USER))
        await facts.add(BOB_ROOM, NewFact("I work night shifts " * 40, "work"))
        await facts.add(BOB_ROOM, NewFact("My name is Bob", "identity", FactSource.CONSOLIDATED))
        await transaction.set_setting("consolidation.last_run", START.isoformat())
        await transaction.set_setting("dm_room:matrix:@alice:example.org", "!dm:example.org")


async def fill_conversation(store: Store) -> None:
    async with store.transaction() as transaction:
        for minute, (room, author, role, text) in enumerate(
            [
                (ALICE_ROOM.room, ALICE_ROOM.owner, Role.USER, "I moved to Berlin"),
                (ALICE_ROOM.room, None, Role.ASSISTANT, "Congratulations on the move!"),
                (BOB_ROOM.room, BOB_ROOM.owner, Role.USER, "what's the weather?"),
                (ALICE_DM.room, ALICE_DM.owner, Role.USER, "I prefer tea 🍵"),
            ]
        ):
            await transaction.turns.add(
                room,
                role,
                text,
                author=author,
                created_at=START + timedelta(minutes=minute),
                platform_message_id=f"$turn{minute}" if role is Role.USER else None,
            )
        first = await transaction.pending.enqueue(
            ALICE_ROOM,
            "I have two sisters",
            message_time=START,
            now=START,
            source_message_id="$event9",
        )
        await transaction.pending.reschedule(
            first.id,
            error="LLM unreachable: connection refused",
            next_attempt_at=START + timedelta(minutes=5),
        )
        await transaction.pending.enqueue(
            BOB_ROOM,
            "I got a dog",
            message_time=START,
            now=START + timedelta(seconds=1),
        )


async def main() -> None:
    TARGET.unlink(missing_ok=True)
    store = await Store.open(TARGET)
    await fill(store)
    await fill_conversation(store)
    await store.aclose()
    print(f"wrote {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
