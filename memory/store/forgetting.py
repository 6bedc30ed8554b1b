"""Forgetting for good (``/memory forget``), inside the caller's transaction.

``fact``, ``everything`` and ``message`` (a deleted chat message) erase the facts with their
versions and events, the turns they were learned from and the queued writes; a fact another
message also taught stays. Each leaves one text-free FORGET row in the history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, delete, false, not_, or_, select
from sqlalchemy.orm import Mapped, Session

from memory.records import Action, Actor, FactStatus
from memory.scope import Scope, ScopeMode
from memory.store.facts import EventDraft, FactRepository, in_visible_rooms, visible_in
from memory.store.pending import PendingWriteRepository
from memory.store.schema import FactEventRow, FactRow, MessageRow, PendingWriteRow, rowcount

Source = tuple[str, str]  # (room, platform message id)


@dataclass(frozen=True, slots=True)
class Learned:
    """An active fact a message taught or confirmed: its id, its version chain (itself
    first), and whether that message is the only source of all of them."""

    fact_id: int
    chain: tuple[int, ...]
    only_source: bool


@dataclass(frozen=True, slots=True)
class Erased:
    """What a forget removed; ``fact_ids`` are every fact row gone (for the vector index)."""

    fact_ids: tuple[int, ...]
    active: int
    events: int
    turns: int
    queued: int


class ForgetRepository:
    def __init__(self, session: Session) -> None:
        self.session = session
        self._facts = FactRepository(session)

    def fact(self, scope: Scope, fact_id: int) -> Erased | None:
        """Erase one fact and what it was learned from; ``None`` if not visible in scope."""
        chain = self._facts.version_chain(scope, fact_id)
        if not chain:
            return None
        active = sum(f.status is FactStatus.ACTIVE for f in self._facts.get_many(scope, chain))
        sources = self.sources(scope.owner, chain)
        events = self._delete_factless_events(scope.owner, sources)
        events += self._facts.erase_ids(scope, chain)
        turns = self._delete_turns_of(scope.owner, sources)
        self._record(scope)
        return Erased(tuple(chain), active, events, turns, 0)

    def everything(self, scope: Scope) -> Erased:
        """Erase all the person has in the scope: facts, events, turns, queued writes."""
        active = self._facts.count(scope)
        fact_ids = self._facts.erase_all(scope)
        events = rowcount(
            self.session.execute(
                delete(FactEventRow).where(
                    visible_in(scope, FactEventRow), not_(text_free_forget())
                )
            )
        )
        turns = rowcount(
            self.session.execute(
                delete(MessageRow).where(
                    MessageRow.author == scope.owner, in_visible_rooms(scope, MessageRow.room)
                )
            )
        )
        queued = PendingWriteRepository(self.session).discard_for_scope(scope)
        if fact_ids or events or turns or queued:
            self._record(scope)
        return Erased(tuple(fact_ids), active, events, turns, queued)

    def message(self, owner: str, rooms: Sequence[str], message_id: str) -> Erased:
        """Erase what the message ``message_id`` of ``owner`` (said in one of ``rooms``) left."""
        own = {(room, message_id) for room in rooms}
        erased: list[int] = []
        active = 0
        for room in rooms:
            scope = Scope(owner, room, ScopeMode.USER_ROOM)
            for learned in self.learned_from(scope, message_id):
                if learned.only_source and learned.chain[0] not in erased:
                    active += 1
                    erased += learned.chain
                    self._facts.erase_ids(scope, learned.chain)
        events = self._delete_factless_events(owner, own)
        turns = self._delete_turns_of(owner, own)
        queued = rowcount(
            self.session.execute(
                delete(PendingWriteRow).where(
                    PendingWriteRow.owner == owner,
                    PendingWriteRow.room.in_(list(rooms)),
                    PendingWriteRow.source_message_id == message_id,
                )
            )
        )
        if erased or events or turns or queued:
            self._record(Scope(owner, rooms[0], ScopeMode.USER_ROOM))
        return Erased(tuple(erased), active, events, turns, queued)

    def author_of(self, rooms: Sequence[str], message_id: str) -> str | None:
        """Whose message ``message_id`` in one of ``rooms`` was, from what it left; or None."""
        for column_owner, column_room, column_source in (
            (FactRow.owner, FactRow.room, FactRow.source_message_id),
            (FactEventRow.owner, FactEventRow.room, FactEventRow.source_message_id),
            (PendingWriteRow.owner, PendingWriteRow.room, PendingWriteRow.source_message_id),
        ):
            query = (
                select(column_owner)
                .where(column_room.in_(list(rooms)), column_source == message_id)
                .limit(1)
            )
            owner = self.session.scalars(query).first()
            if owner is not None:
                return owner
        return None

    def learned_from(self, scope: Scope, message_id: str) -> list[Learned]:
        """The active facts of ``scope``'s room that ``message_id`` taught or confirmed (it
        is among the sources of their versions), each with its version chain."""
        taught = select(FactRow.id).where(
            FactRow.owner == scope.owner,
            FactRow.room == scope.room,
            FactRow.source_message_id == message_id,
        )
        touched = select(FactEventRow.fact_id, FactEventRow.related_fact_id).where(
            FactEventRow.owner == scope.owner,
            FactEventRow.room == scope.room,
            FactEventRow.source_message_id == message_id,
        )
        ids = set(self.session.scalars(taught).all())
        for fact_id, related in self.session.execute(touched).all():
            ids.update(i for i in (fact_id, related) if i is not None)
        learned: dict[int, Learned] = {}
        for fact_id in sorted(ids):
            latest = self._latest_version(scope, fact_id)
            if latest is None or latest in learned:
                continue
            chain = self._facts.version_chain(scope, latest)
            sources = self.sources(scope.owner, chain)
            only = sources <= {(scope.room, message_id)}
            learned[latest] = Learned(latest, tuple(chain), only)
        return list(learned.values())

    def _latest_version(self, scope: Scope, fact_id: int) -> int | None:
        """The active fact that ``fact_id`` is (or became through its updates), if any."""
        seen: set[int] = set()
        current: int | None = fact_id
        while current is not None and current not in seen:
            seen.add(current)
            fact = self._facts.get(scope, current)
            if fact is None:
                return None
            if fact.status is FactStatus.ACTIVE:
                return current
            current = fact.superseded_by if fact.status is FactStatus.SUPERSEDED else None
        return None

    def sources(self, owner: str, fact_ids: Collection[int]) -> set[Source]:
        """The source messages of the facts and of every event on them."""
        ids = list(fact_ids)
        facts = select(FactRow.room, FactRow.source_message_id).where(
            FactRow.owner == owner, FactRow.id.in_(ids)
        )
        events = select(FactEventRow.room, FactEventRow.source_message_id).where(
            FactEventRow.owner == owner,
            or_(FactEventRow.fact_id.in_(ids), FactEventRow.related_fact_id.in_(ids)),
        )
        found: set[Source] = set()
        for query in (facts, events):
            for room, source in self.session.execute(query).all():
                if source is not None:
                    found.add((room, source))
        return found

    def _delete_factless_events(self, owner: str, sources: set[Source]) -> int:
        result = self.session.execute(
            delete(FactEventRow).where(
                FactEventRow.owner == owner,
                FactEventRow.fact_id.is_(None),
                FactEventRow.related_fact_id.is_(None),
                from_sources(FactEventRow.room, FactEventRow.source_message_id, sources),
            )
        )
        return rowcount(result)

    def _delete_turns_of(self, owner: str, sources: set[Source]) -> int:
        result = self.session.execute(
            delete(MessageRow).where(
                MessageRow.author == owner,
                from_sources(MessageRow.room, MessageRow.platform_message_id, sources),
            )
        )
        return rowcount(result)

    def _record(self, scope: Scope) -> None:
        """An audit row without any text: forgetting is final, the words must not survive."""
        self._facts.record_event(scope, EventDraft(final_action=Action.FORGET, actor=Actor.USER))


def text_free_forget() -> ColumnElement[bool]:
    return and_(
        FactEventRow.final_action == Action.FORGET.value,
        FactEventRow.proposed_action.is_(None),
        FactEventRow.proposed_target.is_(None),
        FactEventRow.old_text.is_(None),
        FactEventRow.new_text.is_(None),
    )


def from_sources(
    room: Mapped[str], message_id: Mapped[str | None], sources: set[Source]
) -> ColumnElement[bool]:
    """Rows whose (room, message id) is one of ``sources``; grouped by room to stay short."""
    by_room: dict[str, list[str]] = defaultdict(list)
    for source_room, source_id in sources:
        by_room[source_room].append(source_id)
    conditions = [
        and_(room == source_room, message_id.in_(ids))
        for source_room, ids in sorted(by_room.items())
    ]
    return or_(false(), *conditions)
