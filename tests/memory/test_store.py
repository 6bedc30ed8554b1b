"""The SQLite store: scoped reads and writes, events, turns and the pending queue."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import URL, Row, text

from memory.errors import InvalidScopeError, StorageFullError, StoreError
from memory.records import (
    Action,
    Actor,
    ConversationTurn,
    Fact,
    FactEvent,
    FactSource,
    FactStatus,
    NewFact,
    PendingWrite,
    Role,
)
from memory.scope import Scope, ScopeMode
from memory.store import Erased, EventDraft, Store, StoreTransaction
from tests.memory.full_disk import fill_the_disk

ALICE_R1 = Scope("console:alice", "console:room1")
ALICE_R2 = Scope("console:alice", "console:room2")
BOB_R1 = Scope("console:bob", "console:room1")
ALICE_DM = Scope("console:alice", "console:dm")


async def test_add_and_read_back(store: Store) -> None:
    fact = await store.write(
        lambda transaction: transaction.facts.add(
            ALICE_R1, NewFact("I live in Paris", "location", FactSource.STATED), embedding_model="m"
        )
    )
    read = await store.read(lambda transaction: transaction.facts.get(ALICE_R1, fact.id))
    assert read == fact
    assert read.status is FactStatus.ACTIVE
    assert read.created_at.tzinfo is not None
    assert (read.owner, read.room, read.category) == ("console:alice", "console:room1", "location")


async def test_wal_mode_is_on(sqlite_store: Store) -> None:
    mode = await sqlite_store.read(
        lambda transaction: transaction.session.execute(text("PRAGMA journal_mode")).scalar_one()
    )
    assert mode == "wal"


async def test_a_read_job_sees_one_snapshot_while_the_writer_commits(
    sqlite_store: Store,
) -> None:
    """A read job runs whole in a reader thread, in one transaction: a fact committed
    between two of its statements is in neither (recall's facts and turns agree)."""
    store = sqlite_store
    between = threading.Event()
    committed = threading.Event()

    def read_twice(transaction: StoreTransaction) -> tuple[int, int]:
        first = len(transaction.facts.list_in_scope(ALICE_R1))
        between.set()
        assert committed.wait(timeout=30)
        return first, len(transaction.facts.list_in_scope(ALICE_R1))

    reading = asyncio.ensure_future(store.read(read_twice))
    assert await asyncio.to_thread(between.wait, 30)
    await store.write(lambda transaction: transaction.facts.add(ALICE_R1, NewFact("I have a cat")))
    committed.set()
    assert await reading == (0, 0)
    assert await store.read(lambda tx: len(tx.facts.list_in_scope(ALICE_R1))) == 1


async def test_a_closed_store_says_so_when_read(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "mnemo.sqlite3")
    await store.aclose()
    with pytest.raises(StoreError, match="the store is closed: nothing more can be read"):
        await store.read(lambda transaction: transaction.pending.count())


async def test_store_survives_reopen(database_location: Path | URL) -> None:
    first = await Store.open(database_location)
    fact = await first.write(
        lambda transaction: transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
    )
    await first.aclose()
    second = await Store.open(database_location)
    assert await second.read(lambda transaction: transaction.facts.get(ALICE_R1, fact.id)) == fact
    await second.aclose()


async def test_failed_transaction_writes_nothing(store: Store) -> None:
    def add_then_crash(transaction: StoreTransaction) -> None:
        transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
        raise RuntimeError("crash before commit")

    with pytest.raises(RuntimeError):
        await store.write(add_then_crash)
    assert await store.read(lambda transaction: transaction.facts.list_in_scope(ALICE_R1)) == []


async def test_supersede_and_soft_delete_change_status_only_in_scope(store: Store) -> None:
    def supersede(transaction: StoreTransaction) -> tuple[Fact, Fact | None, Fact | None]:
        old = transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
        new = transaction.facts.add(ALICE_R1, NewFact("I live in Berlin"))
        moment = datetime.now(UTC)
        superseded = transaction.facts.set_status(
            ALICE_R1, old.id, FactStatus.SUPERSEDED, superseded_by=new.id, valid_to=moment
        )
        return new, superseded, transaction.facts.set_status(BOB_R1, new.id, FactStatus.DELETED)

    new, superseded, deleted_by_bob = await store.write(supersede)
    assert deleted_by_bob is None
    assert superseded is not None
    assert (superseded.status, superseded.superseded_by) == (FactStatus.SUPERSEDED, new.id)
    active = await store.read(lambda transaction: transaction.facts.list_in_scope(ALICE_R1))
    assert [f.text for f in active] == ["I live in Berlin"]
    everything = await store.read(
        lambda transaction: transaction.facts.list_in_scope(
            ALICE_R1, statuses=(FactStatus.ACTIVE, FactStatus.SUPERSEDED)
        )
    )
    assert len(everything) == 2


async def test_erase_removes_fact_its_history_and_events(store: Store) -> None:
    def update(transaction: StoreTransaction) -> tuple[Fact, Fact, Fact]:
        old = transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
        new = transaction.facts.add(ALICE_R1, NewFact("I live in Berlin"))
        transaction.facts.set_status(ALICE_R1, old.id, FactStatus.SUPERSEDED, superseded_by=new.id)
        transaction.facts.record_event(
            ALICE_R1,
            EventDraft(
                Action.UPDATE,
                Actor.PIPELINE,
                old.id,
                new.id,
                old_text="I live in Paris",
                new_text="I live in Berlin",
            ),
        )
        kept = transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
        return old, new, kept

    old, new, kept = await store.write(update)

    def erase(transaction: StoreTransaction) -> tuple[Erased | None, Erased | None]:
        by_bob = transaction.forget.fact(BOB_R1, new.id)
        return by_bob, transaction.forget.fact(ALICE_R1, new.id)

    by_bob, by_alice = await store.write(erase)
    assert by_bob is None
    assert by_alice is not None
    assert sorted(by_alice.fact_ids) == sorted([new.id, old.id])

    def remaining(transaction: StoreTransaction) -> tuple[list[Fact], Sequence[Row[Any]]]:
        facts = transaction.facts.list_in_scope(ALICE_R1, statuses=tuple(FactStatus))
        query = text("SELECT old_text, new_text FROM fact_events")
        return facts, transaction.session.execute(query).all()

    facts, texts = await store.read(remaining)
    assert [f.id for f in facts] == [kept.id]
    assert [tuple(row) for row in texts] == [(None, None)]  # the forget's row: no text


async def test_events_are_recorded_and_read_per_fact(store: Store) -> None:
    def add(transaction: StoreTransaction) -> tuple[Fact, FactEvent]:
        fact = transaction.facts.add(ALICE_R1, NewFact("I like chess"))
        event = transaction.facts.record_event(
            ALICE_R1,
            EventDraft(
                Action.ADD,
                Actor.PIPELINE,
                fact.id,
                proposed_action="ADD",
                proposed_target=None,
                new_text="I like chess",
            ),
        )
        return fact, event

    fact, event = await store.write(add)

    def read_then_undo(transaction: StoreTransaction) -> list[list[FactEvent]]:
        facts = transaction.facts
        seen = [
            facts.events_for_fact(ALICE_R1, fact.id),
            facts.events_for_fact(BOB_R1, fact.id),
            facts.events_for_fact(ALICE_R2, fact.id),
            facts.latest_events(ALICE_R1, actors=[Actor.PIPELINE]),
            facts.latest_events(BOB_R1, actors=[Actor.PIPELINE]),
        ]
        facts.mark_undone(ALICE_R1, event.id)
        return seen

    by_alice, by_bob, in_room2, latest, latest_by_bob = await store.write(read_then_undo)
    assert by_alice == [event]
    assert by_bob == []
    assert in_room2 == []
    assert latest == [event]
    assert latest_by_bob == []
    (undone,) = await store.read(
        lambda transaction: transaction.facts.events_for_fact(ALICE_R1, fact.id)
    )
    assert undone.undone_at is not None


async def test_every_fact_function_is_blind_outside_the_scope(store: Store) -> None:
    fact = await store.write(
        lambda transaction: transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
    )
    for other in (BOB_R1, ALICE_R2, ALICE_DM):
        # A write: the functions that change facts must change nothing of Alice's.
        await store.write(partial(blind_to, other, fact))
    assert await store.read(lambda transaction: transaction.facts.get(ALICE_R1, fact.id)) == fact


def blind_to(other: Scope, fact: Fact, transaction: StoreTransaction) -> None:
    """Every fact function, in ``other``'s scope, finds nothing of ``fact`` (asserted here:
    the job runs them all in one transaction, as the person in ``other`` could)."""
    facts = transaction.facts
    assert facts.get(other, fact.id) is None
    assert facts.get_many(other, [fact.id]) == []
    assert facts.list_in_scope(other, statuses=tuple(FactStatus)) == []
    assert facts.count(other, statuses=tuple(FactStatus)) == 0
    assert facts.set_status(other, fact.id, FactStatus.DELETED) is None
    assert facts.version_chain(other, fact.id) == []
    assert facts.erase_ids(other, [fact.id]) == 0
    assert transaction.forget.fact(other, fact.id) is None
    assert facts.erase_all(other) == []
    assert facts.events_for_fact(other, fact.id) == []


async def test_user_mode_follows_the_person_but_keeps_dm_facts_out_of_groups(store: Store) -> None:
    def add(transaction: StoreTransaction) -> list[Fact]:
        return [
            transaction.facts.add(ALICE_R1, NewFact("I like chess")),
            transaction.facts.add(ALICE_DM, NewFact("My salary is secret")),
            transaction.facts.add(BOB_R1, NewFact("Bob's fact")),
        ]

    in_room, in_dm, bobs = await store.write(add)
    everyone = [in_room.id, in_dm.id, bobs.id]

    def read(transaction: StoreTransaction) -> list[list[Fact]]:
        facts = transaction.facts
        return [
            facts.list_in_scope(replace(ALICE_R2, mode=ScopeMode.USER)),
            facts.list_in_scope(replace(ALICE_DM, mode=ScopeMode.USER)),
            # Recall's read by id (its own statements) draws the same lines.
            facts.get_many(replace(ALICE_R2, mode=ScopeMode.USER), everyone),
            facts.get_many(replace(ALICE_DM, mode=ScopeMode.USER), everyone),
            facts.get_many(ALICE_R2, everyone),
        ]

    group, direct, group_by_id, direct_by_id, room_by_id = await store.read(read)
    assert [f.id for f in group] == [f.id for f in group_by_id] == [in_room.id]
    assert sorted(f.id for f in direct) == sorted(f.id for f in direct_by_id)
    assert sorted(f.id for f in direct) == sorted([in_room.id, in_dm.id])
    assert room_by_id == []


async def test_scope_sees_what_the_sql_filter_selects(store: Store) -> None:
    """The in-memory rule (the scope cache's) and the SQL draw the same lines."""
    told = [ALICE_R1, ALICE_R2, ALICE_DM, BOB_R1]
    facts = await store.write(
        lambda transaction: [transaction.facts.add(scope, NewFact("a fact")) for scope in told]
    )
    for scope, mode in itertools.product(told, ScopeMode):
        reader = replace(scope, mode=mode)
        selected = {fact.id for fact in await store.read(partial(list_in_scope, reader))}
        assert selected == {fact.id for fact in facts if reader.sees(fact.owner, fact.room)}


def list_in_scope(
    scope: Scope,
    transaction: StoreTransaction,
    statuses: tuple[FactStatus, ...] = (FactStatus.ACTIVE,),
) -> list[Fact]:
    """The facts with ``statuses`` that ``scope`` sees (a job, given ``scope`` with partial:
    a lambda made in a loop would capture the loop's variable)."""
    return transaction.facts.list_in_scope(scope, statuses=statuses)


def test_scope_rejects_malformed_and_cross_platform_keys() -> None:
    with pytest.raises(InvalidScopeError):
        Scope("alice", "console:room")
    with pytest.raises(InvalidScopeError):
        Scope("matrix:@alice:x.org", "discord:123")
    with pytest.raises(InvalidScopeError, match="NUL"):
        Scope("console:alice", "console:room\x00")
    with pytest.raises(InvalidScopeError, match="lone surrogate"):
        Scope("console:\ud800", "console:room")


async def test_turns_are_per_room_oldest_first_and_purged(store: Store) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)

    def add(transaction: StoreTransaction) -> None:
        for minute in range(5):
            transaction.turns.add(
                "console:room1",
                Role.USER,
                f"message {minute}",
                author="console:alice",
                created_at=start + timedelta(minutes=minute),
            )
        transaction.turns.add(
            "console:room2", Role.ASSISTANT, "elsewhere", author=None, created_at=start
        )

    await store.write(add)

    def purge(
        transaction: StoreTransaction,
    ) -> tuple[list[ConversationTurn], int, list[ConversationTurn]]:
        recent = transaction.turns.recent("console:room1", limit=3)
        purged = transaction.turns.purge_older_than(start + timedelta(minutes=2))
        return recent, purged, transaction.turns.recent("console:room1", limit=10)

    recent, purged, left = await store.write(purge)
    assert [turn.text for turn in recent] == ["message 2", "message 3", "message 4"]
    assert purged == 3
    assert len(left) == 3


async def test_pending_writes_claim_reschedule_and_complete(store: Store) -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    lease = now + timedelta(minutes=15)
    queued = await store.write(
        lambda transaction: transaction.pending.enqueue(
            ALICE_R1, "I moved to Berlin", message_time=now, now=now, source_message_id="m1"
        )
    )

    def claim(
        transaction: StoreTransaction,
    ) -> tuple[PendingWrite | None, PendingWrite | None, bool, bool]:
        pending = transaction.pending
        claimed = pending.claim_next("w1", now=now, until=lease, passing_error="")
        by_w2 = pending.claim_next("w2", now=now, until=lease, passing_error="")
        not_mine = pending.reschedule(queued.id, "w2", error="not mine", next_attempt_at=now)
        mine = pending.reschedule(
            queued.id, "w1", error="LLM down", next_attempt_at=now + timedelta(minutes=1)
        )
        return claimed, by_w2, not_mine, mine

    claimed, by_w2, rescheduled_by_w2, rescheduled_by_w1 = await store.write(claim)
    assert claimed is not None
    assert (claimed.id, claimed.claimed_by, claimed.claimed_until) == (queued.id, "w1", lease)
    # A live claim keeps everyone else off the row (and off Alice's later rows).
    assert by_w2 is None
    assert not rescheduled_by_w2
    assert rescheduled_by_w1

    def retry(
        transaction: StoreTransaction,
    ) -> tuple[list[PendingWrite], list[PendingWrite], bool, PendingWrite | None, bool, bool]:
        pending = transaction.pending
        due_now = pending.due(now)
        due_later = pending.due(now + timedelta(minutes=1))
        completed_when_released = pending.complete_claimed(queued.id, "w1")
        again = pending.claim_next(
            "w1", now=now + timedelta(minutes=1), until=lease, passing_error=""
        )
        by_w2 = pending.complete_claimed(queued.id, "w2")
        by_w1 = pending.complete_claimed(queued.id, "w1")
        return due_now, due_later, completed_when_released, again, by_w2, by_w1

    due_now, due_later, completed_when_released, again, by_w2_done, by_w1_done = await store.write(
        retry
    )
    assert due_now == []
    (later,) = due_later
    assert (later.attempts, later.last_error, later.claimed_by) == (1, "LLM down", None)
    assert not completed_when_released  # released
    assert again is not None and again.id == queued.id
    assert not by_w2_done
    assert by_w1_done
    assert await store.read(lambda transaction: transaction.pending.count()) == 0


async def test_an_ended_lease_lets_another_worker_claim_and_start_up_releases_all(
    store: Store,
) -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)

    def enqueue_and_claim(transaction: StoreTransaction) -> PendingWrite:
        queued = transaction.pending.enqueue(
            ALICE_R1, "I moved to Berlin", message_time=now, now=now
        )
        transaction.pending.claim_next(
            "dead", now=now, until=now + timedelta(minutes=1), passing_error=""
        )
        return queued

    queued = await store.write(enqueue_and_claim)
    later = now + timedelta(minutes=2)

    def take_over(transaction: StoreTransaction) -> tuple[PendingWrite | None, bool, int]:
        pending = transaction.pending
        taken = pending.claim_next(
            "alive", now=later, until=later + timedelta(minutes=1), passing_error=""
        )
        completed_by_dead = pending.complete_claimed(queued.id, "dead")
        return taken, completed_by_dead, pending.release_claims()

    taken, completed_by_dead, released = await store.write(take_over)
    assert taken is not None and taken.claimed_by == "alive"
    assert not completed_by_dead
    assert released == 1
    (row,) = await store.read(lambda transaction: transaction.pending.due(later))
    assert (row.id, row.claimed_by, row.claimed_until) == (queued.id, None, None)


async def test_naive_datetimes_are_refused(store: Store) -> None:
    with pytest.raises(Exception, match="naive datetime"):
        await store.write(
            lambda transaction: transaction.turns.add(
                "console:room1", Role.USER, "x", author=None, created_at=datetime(2026, 1, 1)
            )
        )


JOB_SETTINGS = "SELECT key FROM store_settings WHERE key LIKE 'job.%'"


async def test_settings_round_trip(store: Store) -> None:
    def set_twice(transaction: StoreTransaction) -> None:
        transaction.set_setting("job.consolidate.last_run", "2026-01-01")
        transaction.set_setting("job.consolidate.last_run", "2026-01-02")

    await store.write(set_twice)

    def read(transaction: StoreTransaction) -> tuple[str | None, list[str], str | None]:
        return (
            transaction.get_setting("job.consolidate.last_run"),
            list(transaction.session.scalars(text(JOB_SETTINGS)).all()),
            transaction.get_setting("missing"),
        )

    last_run, keys, missing = await store.read(read)
    assert last_run == "2026-01-02"
    assert keys == ["job.consolidate.last_run"]
    assert missing is None


EXAMPLES = itertools.count()
hostile_ids = st.one_of(
    st.sampled_from(["' OR 1=1 --", "%", "_", "a\nb", "ü'ñ", "\\", "dm", "alice%"]),
    # NUL and lone surrogates are refused by Scope itself (see above).
    st.text(
        alphabet=st.characters(exclude_characters="\x00", exclude_categories=["Cs"]),
        min_size=1,
        max_size=20,
    ),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(owner_id=hostile_ids, room_id=hostile_ids)
async def test_hostile_ids_see_only_their_own_facts(
    store: Store, owner_id: str, room_id: str
) -> None:
    # One store for every example: each example is on a platform of its own.
    platform = f"console{next(EXAMPLES)}"
    hostile = Scope(f"{platform}:{owner_id}", f"{platform}:{room_id}")
    victims = (
        Scope(f"{platform}:alice", f"{platform}:room1"),
        Scope(f"{platform}:alice", f"{platform}:dm"),
        Scope(f"{platform}:alice", f"{platform}:{room_id}"),
    )

    def add(transaction: StoreTransaction) -> Fact:
        for victim in victims:
            transaction.facts.add(victim, NewFact("secret"))
        return transaction.facts.add(hostile, NewFact("mine"))

    own = await store.write(add)
    for mode in ScopeMode:
        read = partial(list_in_scope, replace(hostile, mode=mode), statuses=tuple(FactStatus))
        visible = await store.read(read)
        if owner_id == "alice":
            continue  # the hostile id happens to be alice herself
        assert [fact.id for fact in visible] == [own.id]


async def test_matching_filters_in_sql_by_number_or_text_within_scope(store: Store) -> None:
    def add(transaction: StoreTransaction) -> Fact:
        chess = transaction.facts.add(ALICE_R1, NewFact("I like Chess"))
        transaction.facts.add(ALICE_R1, NewFact("I work 50% remote"))
        transaction.facts.add(BOB_R1, NewFact("I like chess too"))
        retired = transaction.facts.add(ALICE_R1, NewFact("I liked chess as a kid"))
        transaction.facts.set_status(ALICE_R1, retired.id, FactStatus.DELETED)
        return chess

    chess = await store.write(add)

    def match(transaction: StoreTransaction) -> list[list[Fact]]:
        facts = transaction.facts
        return [
            facts.matching(ALICE_R1, "chess", limit=25),
            facts.matching(ALICE_R1, str(chess.id), limit=25),
            facts.matching(ALICE_R1, "%", limit=25),
            facts.matching(ALICE_R1, "_", limit=25),
            facts.matching(ALICE_R1, "", limit=1),
            facts.matching(ALICE_R2, "chess", limit=25),
        ]

    by_text, by_number, percent, underscore, anything, elsewhere = await store.read(match)
    assert [f.id for f in by_text] == [chess.id]
    assert [f.id for f in by_number] == [chess.id]
    # LIKE wildcards typed by a person are literal characters.
    assert [f.text for f in percent] == ["I work 50% remote"]
    assert [f.text for f in underscore] == []
    assert len(anything) == 1
    assert elsewhere == []


async def test_a_full_disk_is_its_own_error_and_writes_nothing(sqlite_store: Store) -> None:
    store = sqlite_store
    kept = await store.write(
        lambda transaction: transaction.facts.add(ALICE_R1, NewFact("I live in Lyon"))
    )
    await fill_the_disk(store)

    def add_many(transaction: StoreTransaction) -> None:
        for number in range(200):
            transaction.facts.add(ALICE_R1, NewFact(f"fact {number} " + "x" * 2000))

    with pytest.raises(StorageFullError, match="disk holding the database is full"):
        await store.write(add_many)
    facts = await store.read(lambda transaction: transaction.facts.list_in_scope(ALICE_R1))
    assert [f.id for f in facts] == [kept.id]
