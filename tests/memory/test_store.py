"""The SQLite store: scoped reads and writes, events, turns and the pending queue."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import URL, text
from sqlalchemy.pool import QueuePool

from memory.errors import InvalidScopeError, StorageFullError
from memory.records import Action, Actor, FactSource, FactStatus, NewFact, Role
from memory.scope import Scope, ScopeMode
from memory.store import EventDraft, Store
from memory.store.database import SQLITE_POOL_SIZE
from tests.memory.full_disk import fill_the_disk

ALICE_R1 = Scope("console:alice", "console:room1")
ALICE_R2 = Scope("console:alice", "console:room2")
BOB_R1 = Scope("console:bob", "console:room1")
ALICE_DM = Scope("console:alice", "console:dm")


async def test_add_and_read_back(store: Store) -> None:
    async with store.transaction() as transaction:
        fact = await transaction.facts.add(
            ALICE_R1, NewFact("I live in Paris", "location", FactSource.STATED), embedding_model="m"
        )
    async with store.transaction() as transaction:
        read = await transaction.facts.get(ALICE_R1, fact.id)
    assert read == fact
    assert read.status is FactStatus.ACTIVE
    assert read.created_at.tzinfo is not None
    assert (read.owner, read.room, read.category) == ("console:alice", "console:room1", "location")


async def test_wal_mode_is_on(sqlite_store: Store) -> None:
    async with sqlite_store.transaction() as transaction:
        mode = (await transaction.session.execute(text("PRAGMA journal_mode"))).scalar_one()
    assert mode == "wal"


async def test_the_pool_of_a_store_that_writes_is_opened_whole_and_kept(tmp_path: Path) -> None:
    store = await Store.open(tmp_path / "mnemo.sqlite3")
    try:
        assert idle_connections(store) < SQLITE_POOL_SIZE
        await store.database.open_connections()
        assert idle_connections(store) == SQLITE_POOL_SIZE
        async with store.read() as transaction:
            assert await transaction.pending.count() == 0
        assert idle_connections(store) == SQLITE_POOL_SIZE  # returned, not closed
    finally:
        await store.aclose()
    reader = Store.open_read_only(tmp_path / "mnemo.sqlite3")
    await reader.database.open_connections()
    assert idle_connections(reader) == 0  # mnemo doctor opens what it uses
    await reader.aclose()


def idle_connections(store: Store) -> int:
    """The connections open in the store's pool that nobody uses now."""
    pool = store.database.engine.pool
    assert isinstance(pool, QueuePool)
    return pool.checkedin()


async def test_store_survives_reopen(database_location: Path | URL) -> None:
    first = await Store.open(database_location)
    async with first.transaction() as transaction:
        fact = await transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
    await first.aclose()
    second = await Store.open(database_location)
    async with second.transaction() as transaction:
        assert (await transaction.facts.get(ALICE_R1, fact.id)) == fact
    await second.aclose()


async def test_failed_transaction_writes_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError):
        async with store.transaction() as transaction:
            await transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
            raise RuntimeError("crash before commit")
    async with store.transaction() as transaction:
        assert await transaction.facts.list_in_scope(ALICE_R1) == []


async def test_supersede_and_soft_delete_change_status_only_in_scope(store: Store) -> None:
    async with store.transaction() as transaction:
        old = await transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
        new = await transaction.facts.add(ALICE_R1, NewFact("I live in Berlin"))
        moment = datetime.now(UTC)
        superseded = await transaction.facts.set_status(
            ALICE_R1, old.id, FactStatus.SUPERSEDED, superseded_by=new.id, valid_to=moment
        )
        assert await transaction.facts.set_status(BOB_R1, new.id, FactStatus.DELETED) is None
    assert superseded is not None
    assert (superseded.status, superseded.superseded_by) == (FactStatus.SUPERSEDED, new.id)
    async with store.transaction() as transaction:
        assert [f.text for f in await transaction.facts.list_in_scope(ALICE_R1)] == [
            "I live in Berlin"
        ]
        everything = await transaction.facts.list_in_scope(
            ALICE_R1, statuses=(FactStatus.ACTIVE, FactStatus.SUPERSEDED)
        )
        assert len(everything) == 2


async def test_erase_removes_fact_its_history_and_events(store: Store) -> None:
    async with store.transaction() as transaction:
        old = await transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
        new = await transaction.facts.add(ALICE_R1, NewFact("I live in Berlin"))
        await transaction.facts.set_status(
            ALICE_R1, old.id, FactStatus.SUPERSEDED, superseded_by=new.id
        )
        await transaction.facts.record_event(
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
        kept = await transaction.facts.add(ALICE_R1, NewFact("I have a cat"))
    async with store.transaction() as transaction:
        assert await transaction.facts.erase(BOB_R1, new.id) == []
        assert sorted(await transaction.facts.erase(ALICE_R1, new.id)) == sorted([new.id, old.id])
    async with store.transaction() as transaction:
        remaining = await transaction.facts.list_in_scope(ALICE_R1, statuses=tuple(FactStatus))
        assert [f.id for f in remaining] == [kept.id]
        query = text("SELECT old_text, new_text FROM fact_events")
        texts = (await transaction.session.execute(query)).all()
        assert texts == []


async def test_events_are_recorded_and_read_per_fact(store: Store) -> None:
    async with store.transaction() as transaction:
        fact = await transaction.facts.add(ALICE_R1, NewFact("I like chess"))
        event = await transaction.facts.record_event(
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
    async with store.transaction() as transaction:
        assert await transaction.facts.events_for_fact(ALICE_R1, fact.id) == [event]
        assert await transaction.facts.events_for_fact(BOB_R1, fact.id) == []
        assert await transaction.facts.events_for_fact(ALICE_R2, fact.id) == []
        latest = await transaction.facts.latest_events(ALICE_R1, actors=[Actor.PIPELINE])
        assert latest == [event]
        assert await transaction.facts.latest_events(BOB_R1, actors=[Actor.PIPELINE]) == []
        await transaction.facts.mark_undone(ALICE_R1, event.id)
    async with store.transaction() as transaction:
        (undone,) = await transaction.facts.events_for_fact(ALICE_R1, fact.id)
        assert undone.undone_at is not None


async def test_every_fact_function_is_blind_outside_the_scope(store: Store) -> None:
    async with store.transaction() as transaction:
        fact = await transaction.facts.add(ALICE_R1, NewFact("I live in Paris"))
    for other in (BOB_R1, ALICE_R2, ALICE_DM):
        async with store.transaction() as transaction:
            facts = transaction.facts
            assert await facts.get(other, fact.id) is None
            assert await facts.get_many(other, [fact.id]) == []
            assert await facts.list_in_scope(other, statuses=tuple(FactStatus)) == []
            assert await facts.count(other, statuses=tuple(FactStatus)) == 0
            assert await facts.set_status(other, fact.id, FactStatus.DELETED) is None
            assert await facts.erase(other, fact.id) == []
            assert await facts.erase_all(other) == []
            assert await facts.events_for_fact(other, fact.id) == []
    async with store.transaction() as transaction:
        assert await transaction.facts.get(ALICE_R1, fact.id) == fact


async def test_user_mode_follows_the_person_but_keeps_dm_facts_out_of_groups(store: Store) -> None:
    async with store.transaction() as transaction:
        in_room = await transaction.facts.add(ALICE_R1, NewFact("I like chess"))
        in_dm = await transaction.facts.add(ALICE_DM, NewFact("My salary is secret"))
        bobs = await transaction.facts.add(BOB_R1, NewFact("Bob's fact"))
    everyone = [in_room.id, in_dm.id, bobs.id]
    async with store.transaction() as transaction:
        group = await transaction.facts.list_in_scope(ALICE_R2.with_mode(ScopeMode.USER))
        direct = await transaction.facts.list_in_scope(ALICE_DM.with_mode(ScopeMode.USER))
        # Recall's read by id (its own statements) draws the same lines.
        group_by_id = await transaction.facts.get_many(ALICE_R2.with_mode(ScopeMode.USER), everyone)
        direct_by_id = await transaction.facts.get_many(
            ALICE_DM.with_mode(ScopeMode.USER), everyone
        )
        room_by_id = await transaction.facts.get_many(ALICE_R2, everyone)
    assert [f.id for f in group] == [f.id for f in group_by_id] == [in_room.id]
    assert sorted(f.id for f in direct) == sorted(f.id for f in direct_by_id)
    assert sorted(f.id for f in direct) == sorted([in_room.id, in_dm.id])
    assert room_by_id == []


async def test_scope_sees_what_the_sql_filter_selects(store: Store) -> None:
    """The in-memory rule (the scope cache's) and the SQL draw the same lines."""
    told = [ALICE_R1, ALICE_R2, ALICE_DM, BOB_R1]
    async with store.transaction() as transaction:
        facts = [await transaction.facts.add(scope, NewFact("a fact")) for scope in told]
    for scope, mode in itertools.product(told, ScopeMode):
        reader = scope.with_mode(mode)
        async with store.read() as transaction:
            selected = {fact.id for fact in await transaction.facts.list_in_scope(reader)}
        assert selected == {fact.id for fact in facts if reader.sees(fact.owner, fact.room)}


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
    async with store.transaction() as transaction:
        for minute in range(5):
            await transaction.turns.add(
                "console:room1",
                Role.USER,
                f"message {minute}",
                author="console:alice",
                created_at=start + timedelta(minutes=minute),
            )
        await transaction.turns.add(
            "console:room2", Role.ASSISTANT, "elsewhere", author=None, created_at=start
        )
    async with store.transaction() as transaction:
        recent = await transaction.turns.recent("console:room1", limit=3)
        assert [turn.text for turn in recent] == ["message 2", "message 3", "message 4"]
        purged = await transaction.turns.purge_older_than(start + timedelta(minutes=2))
        assert purged == 3
        assert len(await transaction.turns.recent("console:room1", limit=10)) == 3


async def test_pending_writes_claim_reschedule_and_complete(store: Store) -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    lease = now + timedelta(minutes=15)
    async with store.transaction() as transaction:
        queued = await transaction.pending.enqueue(
            ALICE_R1, "I moved to Berlin", message_time=now, now=now, source_message_id="m1"
        )
    async with store.transaction() as transaction:
        claimed = await transaction.pending.claim_next("w1", now=now, until=lease, passing_error="")
        assert claimed is not None
        assert (claimed.id, claimed.claimed_by, claimed.claimed_until) == (queued.id, "w1", lease)
        # A live claim keeps everyone else off the row (and off Alice's later rows).
        assert (
            await transaction.pending.claim_next("w2", now=now, until=lease, passing_error="")
            is None
        )
        assert not await transaction.pending.reschedule(
            queued.id, "w2", error="not mine", next_attempt_at=now
        )
        assert await transaction.pending.reschedule(
            queued.id, "w1", error="LLM down", next_attempt_at=now + timedelta(minutes=1)
        )
    async with store.transaction() as transaction:
        assert await transaction.pending.due(now) == []
        (later,) = await transaction.pending.due(now + timedelta(minutes=1))
        assert (later.attempts, later.last_error, later.claimed_by) == (1, "LLM down", None)
        assert not await transaction.pending.complete_claimed(queued.id, "w1")  # released
        again = await transaction.pending.claim_next(
            "w1", now=now + timedelta(minutes=1), until=lease, passing_error=""
        )
        assert again is not None and again.id == queued.id
        assert not await transaction.pending.complete_claimed(queued.id, "w2")
        assert await transaction.pending.complete_claimed(queued.id, "w1")
    async with store.transaction() as transaction:
        assert await transaction.pending.count() == 0


async def test_an_ended_lease_lets_another_worker_claim_and_start_up_releases_all(
    store: Store,
) -> None:
    now = datetime(2026, 1, 1, 12, tzinfo=UTC)
    async with store.transaction() as transaction:
        queued = await transaction.pending.enqueue(
            ALICE_R1, "I moved to Berlin", message_time=now, now=now
        )
        await transaction.pending.claim_next(
            "dead", now=now, until=now + timedelta(minutes=1), passing_error=""
        )
    later = now + timedelta(minutes=2)
    async with store.transaction() as transaction:
        taken = await transaction.pending.claim_next(
            "alive", now=later, until=later + timedelta(minutes=1), passing_error=""
        )
        assert taken is not None and taken.claimed_by == "alive"
        assert not await transaction.pending.complete_claimed(queued.id, "dead")
        assert await transaction.pending.release_claims() == 1
        row = await transaction.pending.get(queued.id)
        assert row is not None and (row.claimed_by, row.claimed_until) == (None, None)


async def test_naive_datetimes_are_refused(store: Store) -> None:
    with pytest.raises(Exception, match="naive datetime"):
        async with store.transaction() as transaction:
            await transaction.turns.add(
                "console:room1", Role.USER, "x", author=None, created_at=datetime(2026, 1, 1)
            )


async def test_settings_round_trip(store: Store) -> None:
    async with store.transaction() as transaction:
        await transaction.set_setting("job.consolidate.last_run", "2026-01-01")
        await transaction.set_setting("job.consolidate.last_run", "2026-01-02")
    async with store.transaction() as transaction:
        assert await transaction.get_setting("job.consolidate.last_run") == "2026-01-02"
        assert await transaction.setting_keys("job.") == ["job.consolidate.last_run"]
        assert await transaction.get_setting("missing") is None


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
    async with store.transaction() as transaction:
        for victim in victims:
            await transaction.facts.add(victim, NewFact("secret"))
        own = await transaction.facts.add(hostile, NewFact("mine"))
    for mode in ScopeMode:
        async with store.transaction() as transaction:
            visible = await transaction.facts.list_in_scope(
                hostile.with_mode(mode), statuses=tuple(FactStatus)
            )
        if owner_id == "alice":
            continue  # the hostile id happens to be alice herself
        assert [fact.id for fact in visible] == [own.id]


async def test_matching_filters_in_sql_by_number_or_text_within_scope(store: Store) -> None:
    async with store.transaction() as transaction:
        chess = await transaction.facts.add(ALICE_R1, NewFact("I like Chess"))
        await transaction.facts.add(ALICE_R1, NewFact("I work 50% remote"))
        await transaction.facts.add(BOB_R1, NewFact("I like chess too"))
        retired = await transaction.facts.add(ALICE_R1, NewFact("I liked chess as a kid"))
        await transaction.facts.set_status(ALICE_R1, retired.id, FactStatus.DELETED)
    async with store.transaction() as transaction:
        facts = transaction.facts
        assert [f.id for f in await facts.matching(ALICE_R1, "chess", limit=25)] == [chess.id]
        assert [f.id for f in await facts.matching(ALICE_R1, str(chess.id), limit=25)] == [chess.id]
        # LIKE wildcards typed by a person are literal characters.
        assert [f.text for f in await facts.matching(ALICE_R1, "%", limit=25)] == [
            "I work 50% remote"
        ]
        assert [f.text for f in await facts.matching(ALICE_R1, "_", limit=25)] == []
        assert len(await facts.matching(ALICE_R1, "", limit=1)) == 1
        assert await facts.matching(ALICE_R2, "chess", limit=25) == []


async def test_a_full_disk_is_its_own_error_and_writes_nothing(sqlite_store: Store) -> None:
    store = sqlite_store
    async with store.transaction() as transaction:
        kept = await transaction.facts.add(ALICE_R1, NewFact("I live in Lyon"))
    await fill_the_disk(store)
    with pytest.raises(StorageFullError, match="disk holding the database is full"):
        async with store.transaction() as transaction:
            for number in range(200):
                await transaction.facts.add(ALICE_R1, NewFact(f"fact {number} " + "x" * 2000))
    async with store.transaction() as transaction:
        assert [f.id for f in await transaction.facts.list_in_scope(ALICE_R1)] == [kept.id]
